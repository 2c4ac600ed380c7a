//! One model's context and the replies it serves: renders and tokenizes prompts, keeps each
//! conversation's KV cache, and decodes every running reply in one batch per step.
//!
//! The context holds up to [`SEQUENCES`] KV sequences (slots) in one unified cache of
//! `n_ctx` cells. Each step decodes the last sampled token of every reply that is writing, and
//! fills the rest of the batch with the next chunk of a prompt being read — continuous batching,
//! as llama.cpp's server does. A reply waits for a free slot (or for room in the cache) in the
//! order it came. A chat's reply alone moves the other chats' caches to [`KvMemory`], so it
//! attends over no one else's cells; a one-off prompt's cache (a server client's) stays in its
//! slot for its next turn until its cells are needed.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{DecodeError, LlamaStateSeqFlags};
use tokio::sync::mpsc::UnboundedSender;

use hearth_core::{
    BackendError, CacheBudgets, ChatMessage, FinishReason, GenEvent, OverflowPolicy, PromptSource, ReplyRequest, ReplyStats, Role,
    SamplingParams, Speculative, Strategy, fit_context,
};

use crate::LoadParams;
use crate::beam::{BeamReply, Fork, LaneView};
use crate::checkpoints::{self, Checkpoint, Checkpoints, CutBack};
use crate::consensus::{Group, Member};
use crate::draft_threads::DraftThreads;
use crate::drafter::Drafter;
use crate::idle_cores;
use crate::interrupt::{self, DraftInterrupt};
use crate::kv_memory::{ConversationId, KvMemory, SavedState};
use crate::load::Threads;
use crate::prefix;
use crate::reply::Reply;
use crate::sampler;
use crate::threads::DecodeThreads;

mod prompt;
mod read_ahead;

use prompt::{Rendered, Renderer, special_text};

/// A prompt fitted to the context: its tokens, the messages left out, and how it was written.
struct Fitted {
    tokens: Vec<LlamaToken>,
    dropped: usize,
    notice: Option<String>,
}

/// KV sequences in one context: replies and consensus candidates written at once.
pub const SEQUENCES: u32 = 8;
/// Replies one context serves at once (a consensus reply is one, however many candidates it
/// writes); a reply beyond these waits for one to end.
pub const PARALLEL_REPLIES: usize = 4;
/// The shortest candidate a consensus reply is allowed to be cut to for room in the context.
const MIN_CANDIDATE_TOKENS: usize = 16;

/// One KV sequence and what is in it.
struct Slot {
    seq: i32,
    /// Tokens whose keys and values are in the cache for `seq`, in position order. A sampled
    /// token that was never decoded (end of turn, length limit, stop) is not in it.
    cached: Vec<LlamaToken>,
    /// The conversation whose cache this is (`None`: a one-off prompt, or none yet).
    owner: Option<ConversationId>,
    /// A reply is writing in it.
    busy: bool,
    /// When it last served a reply ([`Session::clock`]), for least-recently-used choices.
    used_at: u64,
    /// Where its cache can be cut back to, when the model's cannot be cut back freely.
    checkpoints: Checkpoints,
    /// Token counts at which the prompt being read takes a checkpoint (reading stops there).
    marks: Vec<usize>,
    /// The mark where the user's last message starts.
    message_mark: Option<usize>,
}

impl Slot {
    fn new(seq: i32) -> Self {
        Slot {
            seq,
            cached: Vec::new(),
            owner: None,
            busy: false,
            used_at: 0,
            checkpoints: Checkpoints::default(),
            marks: Vec::new(),
            message_mark: None,
        }
    }

    /// Forgets what its sequence held (its cells were cleared): tokens, checkpoints, marks.
    fn empty(&mut self) {
        self.cached.clear();
        self.checkpoints.clear();
        self.marks.clear();
    }

    /// How many of `want` prompt tokens can be read before the next checkpoint is due.
    fn readable(&self, want: usize) -> usize {
        let at = self.cached.len();
        self.marks.iter().find(|&&mark| mark > at).map_or(want, |&mark| want.min(mark - at))
    }
}

/// A reply asked for, its prompt fitted, waiting for a slot.
struct Queued {
    request: ReplyRequest,
    events: UnboundedSender<GenEvent>,
    tokens: Vec<LlamaToken>,
    dropped: usize,
    /// How the prompt was written, if the chat template could not be used as it is.
    notice: Option<String>,
    asked_at: Instant,
    /// A consensus reply's candidate.
    member: Option<Member>,
}

pub struct Session<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    renderer: Renderer,
    slots: Vec<Slot>,
    queued: VecDeque<Queued>,
    running: Vec<Reply>,
    /// Consensus replies being written, and their candidates waiting for the first to read the prompt.
    groups: Vec<Group>,
    waiting_members: Vec<Queued>,
    /// Beam searches being run.
    beams: Vec<BeamReply>,
    batch: LlamaBatch<'static>,
    n_batch: usize,
    reuse_kv: bool,
    /// The other conversations' caches; `None` keeps only the live ones (asides, reuse off).
    memory: Option<KvMemory>,
    /// The conversation whose draft was read ahead into the cache since its last reply.
    typed: Option<ConversationId>,
    clock: u64,
    /// Drafts can be checked: a recurrent or hybrid model cannot drop the cells of those rejected.
    speculate: bool,
    /// How far the model's cache can be cut back; checkpoints are taken unless freely.
    cut_back: CutBack,
    /// How the model was loaded: draft models are loaded alike.
    params: LoadParams,
    /// The draft models replies draft with (speculative decoding), loaded when first asked for.
    drafters: Vec<Drafter>,
    /// Threads for one-token steps, chosen by measurement; `threads.batch` reads prompts.
    decode_threads: DecodeThreads,
    threads: Threads,
    /// Stops a draft's chunk in flight for a reply (after `context`: dropped after it).
    interrupt: Option<Box<DraftInterrupt>>,
    /// The typist's pace and the drafts' reading pace: which thread count reads a draft.
    draft_threads: DraftThreads,
}

impl<'m> Session<'m> {
    /// `n_seq`: the sequences `context` was created for (at most that many replies at once).
    /// `threads`, `swa_full`: what `context` was created with (`load::context_params`).
    pub fn new(
        model: &'m LlamaModel,
        context: LlamaContext<'m>,
        params: &LoadParams,
        threads: Threads,
        memory: Option<KvMemory>,
        n_seq: u32,
        swa_full: bool,
    ) -> Self {
        let n_batch = params.n_batch as usize;
        let slots = (0..n_seq.max(1) as i32).map(Slot::new).collect();
        let cut_back = CutBack::of(model);
        Session {
            model,
            context,
            renderer: Renderer::for_model(model, params.chat_template.as_deref()),
            slots,
            queued: VecDeque::new(),
            running: Vec::new(),
            groups: Vec::new(),
            waiting_members: Vec::new(),
            beams: Vec::new(),
            batch: LlamaBatch::new(n_batch, 1),
            n_batch,
            reuse_kv: params.reuse_kv,
            memory: memory.filter(|_| params.reuse_kv),
            typed: None,
            clock: 0,
            // Rejected drafts are cut back: where every cell stays while reading (a restored
            // window cache holds its window, all a draft after it needs).
            speculate: match cut_back {
                CutBack::Free => true,
                CutBack::Window(_) => swa_full,
                CutBack::Never => false,
            },
            cut_back,
            params: params.clone(),
            drafters: Vec::new(),
            decode_threads: DecodeThreads::new(threads.decode, params.n_threads.is_none()),
            threads,
            interrupt: None,
            draft_threads: DraftThreads::default(),
        }
    }

    /// A reply counted in `replies` (asked for, not yet taken up) stops the draft chunk being
    /// read, where the model's cache can be cut back freely: the chunk's cells are dropped (a
    /// recurrent state or a sliding window's evicted cells could not be put back).
    pub fn interrupt_drafts_on(&mut self, replies: Arc<AtomicUsize>) {
        if self.cut_back == CutBack::Free {
            self.interrupt = Some(DraftInterrupt::install(&mut self.context, replies));
        }
    }

    /// Whether replies are running or waiting: call [`Session::step`] until not.
    pub fn is_busy(&self) -> bool {
        !self.running.is_empty() || !self.queued.is_empty() || !self.groups.is_empty() || !self.beams.is_empty()
    }

    /// Generates a reply and waits for it (and any other reply in hand) to end; its events
    /// always end with `Finished` or `Failed`.
    pub fn reply(&mut self, request: ReplyRequest, events: &UnboundedSender<GenEvent>) {
        self.submit(request, events.clone());
        while self.is_busy() {
            self.step();
        }
    }

    /// Queues a reply; [`Session::step`] serves it. A prompt that cannot fit fails at once.
    pub fn submit(&mut self, request: ReplyRequest, events: UnboundedSender<GenEvent>) {
        let asked_at = Instant::now();
        let fitted = self.fit_prompt(&request, self.n_ctx());
        let queued = match fitted.and_then(|fitted| self.load_drafter(&request).map(|()| fitted)) {
            Ok(Fitted { tokens, dropped, notice }) => Queued { request, events, tokens, dropped, notice, asked_at, member: None },
            Err(error) => {
                let _ = events.send(GenEvent::Failed(error));
                return;
            }
        };
        match queued.request.sampling.strategy {
            Strategy::Sampling => self.queued.push_back(queued),
            Strategy::Consensus => self.submit_consensus(queued),
            Strategy::Beam if self.beam_room(&queued.request, queued.tokens.len()) < MIN_CANDIDATE_TOKENS => {
                let error = BackendError::InvalidRequest(format!(
                    "a beam search {} wide does not fit the context: each beam needs the prompt's {} tokens and room to write, \
                     and the context has {}; choose a narrower beam, shorten the chat or load the model with a larger context",
                    queued.request.sampling.beam_width,
                    queued.tokens.len(),
                    self.n_ctx()
                ));
                let _ = queued.events.send(GenEvent::Failed(error));
            }
            Strategy::Beam => self.queued.push_back(queued),
        }
    }

    /// Loads the draft model `request` drafts with, if it drafts with one not loaded yet (and
    /// drops those no reply drafts with any more). Refused before the reply starts when the
    /// file cannot be loaded or its vocabulary is not the model's.
    fn load_drafter(&mut self, request: &ReplyRequest) -> Result<(), BackendError> {
        let sampling = &request.sampling;
        let drafts = self.speculate && sampling.speculative == Speculative::DraftModel && sampling.strategy != Strategy::Beam;
        let Some(path) = sampling.draft_model.as_ref().filter(|_| drafts) else { return Ok(()) };
        if self.drafters.iter().any(|d| &d.path == path) {
            return Ok(());
        }
        let requests = self.running.iter().map(|r| &r.request).chain(self.queued.iter().chain(&self.waiting_members).map(|q| &q.request));
        let in_use: Vec<&String> = requests.filter_map(|r| r.sampling.draft_model.as_ref()).collect();
        self.drafters.retain(|d| in_use.contains(&&d.path));
        let drafter = Drafter::load(path, self.model, &self.params, self.n_ctx() as u32, self.slots.len() as u32)?;
        self.drafters.push(drafter);
        Ok(())
    }

    /// Queues a consensus reply's first candidate; the others wait for it to read the prompt
    /// (see [`Session::release_members`]). Refused when the candidates cannot all have room.
    fn submit_consensus(&mut self, queued: Queued) {
        let Queued { request, events, tokens, dropped, notice, asked_at, .. } = queued;
        let at_once = (request.sampling.mbr_candidates as usize).min(self.slots.len());
        // Each candidate's cells are counted in full (a shared opening too): room is never overestimated.
        let room = (self.n_ctx() / at_once).saturating_sub(tokens.len() + 1);
        if room < MIN_CANDIDATE_TOKENS {
            let error = BackendError::InvalidRequest(format!(
                "{} consensus candidates do not fit the context: each needs the prompt's {} tokens and room to write, and the \
                 context has {}; choose fewer candidates, shorten the chat or load the model with a larger context",
                request.sampling.mbr_candidates,
                tokens.len(),
                self.n_ctx()
            ));
            let _ = events.send(GenEvent::Failed(error));
            return;
        }
        let id = self.clock;
        self.clock += 1;
        let max_tokens = request.sampling.max_tokens.min(room as u32);
        let (group, members) = Group::new(id, &request, events, max_tokens, asked_at);
        self.groups.push(group);
        for (index, (request, events)) in members.into_iter().enumerate() {
            let member = Some(Member { group: id, index });
            let queued = Queued { request, events, tokens: tokens.clone(), dropped, notice: notice.clone(), asked_at, member };
            if index == 0 { self.queued.push_back(queued) } else { self.waiting_members.push(queued) }
        }
    }

    /// Queues, first in line, the candidates whose first has read the prompt (or ended): they
    /// share its cells instead of reading it again.
    fn release_members(&mut self) {
        let waiting = std::mem::take(&mut self.waiting_members);
        let (ready, still): (Vec<Queued>, Vec<Queued>) = waiting.into_iter().partition(|queued| {
            let group = queued.member.map(|m| m.group);
            !self
                .running
                .iter()
                .any(|r| r.member.map(|m| m.group) == group && r.member.is_some_and(|m| m.index == 0) && !r.prompt.is_empty())
                && !self.queued.iter().any(|q| q.member.is_some_and(|m| Some(m.group) == group && m.index == 0))
        });
        self.waiting_members = still;
        for queued in ready.into_iter().rev() {
            self.queued.push_front(queued);
        }
    }

    /// Hands finished consensus replies to their clients; candidates of a group that ended
    /// early (one failed, the client left) and still waiting to start are dropped.
    fn poll_groups(&mut self) {
        let mut ended = Vec::new();
        self.groups.retain_mut(|group| {
            let done = group.poll();
            if done {
                ended.push(group.id);
            }
            !done
        });
        self.waiting_members.retain(|queued| queued.member.is_none_or(|m| !ended.contains(&m.group)));
    }

    /// Replies being served that count against [`PARALLEL_REPLIES`]: a consensus reply counts
    /// once, by its first candidate.
    fn serving(&self) -> usize {
        self.running.iter().filter(|r| r.member.is_none_or(|m| m.index == 0)).count() + self.beams.len()
    }

    /// Starts what waits and fits, then decodes one batch: the next token of every reply that
    /// is writing and as much of a prompt being read as the batch has room for.
    pub fn step(&mut self) {
        self.admit();
        if self.running.is_empty() && self.beams.is_empty() {
            self.poll_groups();
            return;
        }
        let n_ctx = self.n_ctx();
        let beams_writing: usize = self.beams.iter().filter(|b| b.prompt.is_empty()).map(|b| b.lanes.len()).sum();
        let writing = self.running.iter().filter(|r| r.next.is_some()).count() + beams_writing;
        if self.used_cells() + writing >= n_ctx {
            // Idle slots give their cells up before a reply is cut short for want of them.
            self.make_room(usize::MAX, writing + 1);
        }
        let mut used = self.used_cells();
        let mut ended: Vec<(usize, FinishReason)> = Vec::new();
        let mut added: Vec<Vec<LlamaToken>> = vec![Vec::new(); self.running.len()];
        self.batch.clear();
        let mut writers_left = writing;
        for (i, reply) in self.running.iter_mut().enumerate() {
            if reply.request.cancel.is_cancelled() {
                ended.push((i, FinishReason::Cancelled));
                continue;
            }
            if reply.next.is_none() {
                continue;
            }
            writers_left -= 1;
            if used + 1 >= n_ctx {
                ended.push((i, FinishReason::Length)); // The context is full.
                continue;
            }
            let slot = &self.slots[reply.slot];
            // Drafts take what the cache and the batch have left once every writer has its token.
            if self.speculate {
                let room = (n_ctx - used - 2).min(self.n_batch.saturating_sub(self.batch.n_tokens() as usize + 1 + writers_left));
                reply.guess(&slot.cached, slot.seq, room, &mut self.drafters);
            }
            let Some(token) = reply.next.take() else { continue };
            let first = slot.cached.len() as i32;
            let at = self.batch.n_tokens();
            let tokens: Vec<LlamaToken> = std::iter::once(token).chain(reply.drafts.iter().copied()).collect();
            let added_all = tokens.iter().enumerate().all(|(k, &t)| self.batch.add(t, first + k as i32, &[slot.seq], true).is_ok());
            if !added_all {
                ended.push((i, FinishReason::Length));
                continue;
            }
            reply.logits_at = Some(at);
            used += tokens.len();
            added[i] = tokens;
        }
        let mut beam_added = Vec::new();
        for beam in &mut self.beams {
            let room = self.n_batch.saturating_sub(self.batch.n_tokens() as usize).min(n_ctx.saturating_sub(used + 1));
            let slots = &self.slots;
            let added = beam.fill(&mut self.batch, |slot| LaneView { seq: slots[slot].seq, cached: slots[slot].cached.len() }, room);
            used += added.iter().map(|(_, tokens)| tokens.len()).sum::<usize>();
            beam_added.push(added);
        }
        for (i, reply) in self.running.iter_mut().enumerate() {
            let room = self.n_batch.saturating_sub(self.batch.n_tokens() as usize);
            if room == 0 {
                break;
            }
            if reply.prompt.is_empty() || !added[i].is_empty() || ended.iter().any(|(e, _)| *e == i) {
                continue;
            }
            let readable = self.slots[reply.slot].readable(room.min(reply.prompt.len()));
            let chunk: Vec<LlamaToken> = reply.prompt.drain(..readable).collect();
            let read_all = reply.prompt.is_empty();
            let slot = &self.slots[reply.slot];
            for (k, &token) in chunk.iter().enumerate() {
                let logits = read_all && k + 1 == chunk.len();
                // Within n_batch by construction; a failure here would be a bug in this loop.
                let _ = self.batch.add(token, (slot.cached.len() + k) as i32, &[slot.seq], logits);
            }
            if read_all {
                reply.logits_at = Some(self.batch.n_tokens() - 1);
            }
            added[i] = chunk;
        }
        if self.batch.n_tokens() > 0
            && let Err(e) = self.decode_step()
        {
            self.fail_all(&BackendError::Engine(format!("decoding failed: {e}")));
            return;
        }
        for (reply, tokens) in self.running.iter().zip(added) {
            self.slots[reply.slot].cached.extend(tokens);
        }
        let due: Vec<usize> = self.running.iter().map(|r| r.slot).filter(|&slot| self.checkpoint_due(slot)).collect();
        for slot in due {
            self.take_checkpoint(slot);
        }
        for (beam, added) in self.beams.iter().zip(beam_added) {
            for (lane, tokens) in added {
                self.slots[beam.lanes[lane]].cached.extend(tokens);
            }
        }
        self.expand_beams();
        for (i, reply) in self.running.iter_mut().enumerate() {
            let sampled = reply.sample(&self.context, self.model);
            if sampled.rejected > 0 {
                // The drafts after the first the sampler did not choose leave the cache.
                let slot = &mut self.slots[reply.slot];
                let keep = slot.cached.len() - sampled.rejected;
                if self.context.kv_cache_seq_rm(slot.seq, Some(keep as u32), None).is_err() {
                    ended.push((i, FinishReason::Length));
                }
                slot.cached.truncate(keep);
                slot.checkpoints.cut(keep);
            }
            if let Some(reason) = sampled.finish {
                ended.push((i, reason));
            }
        }
        ended.sort_by_key(|(i, _)| std::cmp::Reverse(*i));
        ended.dedup_by_key(|(i, _)| *i);
        for (i, reason) in ended {
            let reply = self.running.remove(i);
            self.release(reply.slot);
            reply.finish(reason);
        }
        self.release_members();
        self.poll_groups();
    }

    /// Keeps every conversation's cache on disk: the model is unloaded or the engine quits.
    pub fn retire(mut self) {
        for slot in 0..self.slots.len() {
            self.park(slot);
        }
        if let Some(memory) = self.memory.as_mut() {
            memory.spill_all();
        }
    }

    /// New budgets for the other chats' caches, in force at once.
    pub fn set_cache_budgets(&mut self, budgets: CacheBudgets) {
        if let Some(memory) = self.memory.as_mut() {
            memory.set_budgets(budgets);
        }
    }

    /// Bytes of other chats' caches held in RAM.
    pub fn kv_ram_bytes(&self) -> u64 {
        self.memory.as_ref().map_or(0, KvMemory::ram_bytes)
    }

    /// Drops `conversation`'s cache everywhere (its chat was deleted); `None`: every chat's.
    pub fn forget(&mut self, conversation: Option<ConversationId>) {
        for slot in &mut self.slots {
            if conversation.is_none() || slot.owner == conversation {
                slot.owner = None;
            }
        }
        if let Some(memory) = self.memory.as_mut() {
            memory.forget(conversation);
        }
    }

    fn n_ctx(&self) -> usize {
        self.context.n_ctx() as usize
    }

    /// Cells of the unified cache in use, by every slot (an opening two slots share counts twice:
    /// the room it leaves is never overestimated).
    fn used_cells(&self) -> usize {
        self.slots.iter().map(|s| s.cached.len()).sum()
    }

    /// Starts the queued replies in order while a slot is free and the cache has room for the
    /// next one's prompt and reply.
    fn admit(&mut self) {
        while self.slots.iter().any(|s| !s.busy) {
            let Some(front) = self.queued.front() else { return };
            if front.member.is_none_or(|m| m.index == 0) && self.serving() >= PARALLEL_REPLIES {
                return;
            }
            let Some(next) = self.queued.pop_front() else { return };
            if next.request.cancel.is_cancelled() || next.events.is_closed() {
                let _ = next.events.send(GenEvent::Finished { reason: FinishReason::Cancelled, stats: ReplyStats::default() });
                continue;
            }
            let beam = next.request.sampling.strategy == Strategy::Beam;
            let width = if beam { next.request.sampling.beam_width as usize } else { 1 };
            if self.slots.iter().filter(|s| !s.busy).count() < width {
                self.queued.push_front(next);
                return; // A beam search waits for all its lanes.
            }
            let slot = self.choose_slot(next.request.conversation, &next.tokens);
            if self.running.is_empty() && self.beams.is_empty() {
                self.park_idle_conversations_but(slot);
            }
            let room = if beam {
                let reserve = (next.request.sampling.max_tokens as usize).min(self.beam_room(&next.request, next.tokens.len()));
                self.make_room(slot, width * (next.tokens.len() + reserve))
            } else {
                self.room_for(slot, &next.tokens, next.request.sampling.max_tokens)
            };
            if !room {
                self.queued.push_front(next);
                return; // It waits for a reply to end.
            }
            if beam { self.start_beam(slot, next) } else { self.start(slot, next) }
        }
    }

    fn start(&mut self, slot: usize, queued: Queued) {
        let Queued { request, events, tokens, dropped, notice, asked_at, member } = queued;
        let sampler = match sampler::build(self.model, &request.sampling, self.n_ctx() as u32) {
            Ok(sampler) => sampler,
            Err(error) => {
                let _ = events.send(GenEvent::Failed(error));
                return;
            }
        };
        let (prompt, stats) = self.take_prompt(slot, &request, tokens, dropped, notice);
        tracing::debug!(
            since_asked_ms = asked_at.elapsed().as_secs_f64() * 1000.0,
            prompt_tokens = stats.prompt_tokens,
            cached = stats.cached_tokens,
            source = ?stats.prompt_source,
            "reply started"
        );
        self.slots[slot].busy = true;
        let mut reply = Reply::new(slot, request, events, prompt, sampler, stats, asked_at);
        reply.member = member;
        self.running.push(reply);
    }

    /// Makes `slot` hold as much of `tokens` as any cache has (its conversation's, another
    /// slot's opening); returns the tokens left to read and the reply's first stats.
    fn take_prompt(
        &mut self,
        slot: usize,
        request: &ReplyRequest,
        tokens: Vec<LlamaToken>,
        dropped: usize,
        notice: Option<String>,
    ) -> (Vec<LlamaToken>, ReplyStats) {
        // Two replies of one conversation at once: the second keeps no cache for it.
        let conversation = request.conversation.filter(|c| !self.slots.iter().any(|s| s.busy && s.owner == Some(*c)));
        let source = match self.switch_to(slot, conversation, &tokens) {
            PromptSource::Live if conversation.is_some() && self.typed == conversation => PromptSource::Typed,
            source => source,
        };
        if self.typed == conversation {
            self.typed = None;
        }
        let tokens = if self.reuse_kv { self.follow_cache(slot, &request.messages, request.continue_last, tokens) } else { tokens };
        let kept = self.reuse_prefix(slot, &tokens);
        let cached_tokens = self.borrow_prefix(slot, &tokens, kept);
        self.set_marks(slot, &request.messages, request.continue_last, &tokens);
        let stats = ReplyStats {
            prompt_tokens: tokens.len() as u32,
            cached_tokens: cached_tokens as u32,
            prompt_source: if cached_tokens == 0 { PromptSource::New } else { source },
            dropped_messages: dropped as u32,
            template_notice: notice,
            ..ReplyStats::default()
        };
        (tokens[cached_tokens..].to_vec(), stats)
    }

    /// Starts a beam search in `slot` (its first lane, which reads the prompt) and `width - 1`
    /// other idle slots, emptied.
    fn start_beam(&mut self, slot: usize, queued: Queued) {
        let Queued { request, events, tokens, dropped, notice, asked_at, .. } = queued;
        let constraints = match sampler::constraints(self.model, &request.sampling) {
            Ok(constraints) => constraints,
            Err(error) => {
                let _ = events.send(GenEvent::Failed(error));
                return;
            }
        };
        let width = request.sampling.beam_width as usize;
        let mut others: Vec<usize> = (0..self.slots.len()).filter(|&i| i != slot && !self.slots[i].busy).collect();
        others.sort_by_key(|&i| (!self.slots[i].cached.is_empty(), self.slots[i].used_at));
        others.truncate(width - 1);
        for &lane in &others {
            self.park(lane);
        }
        let (prompt, stats) = self.take_prompt(slot, &request, tokens, dropped, notice);
        let lanes: Vec<usize> = std::iter::once(slot).chain(others).collect();
        for &lane in &lanes {
            self.slots[lane].busy = true;
        }
        let max_tokens = request.sampling.max_tokens.min(self.beam_room(&request, prompt.len() + stats.cached_tokens as usize) as u32);
        self.beams.push(BeamReply::new(request, events, lanes, prompt, constraints, max_tokens, stats, asked_at));
    }

    /// Tokens each beam may write when every lane holds the whole prompt (a shared opening is
    /// counted in each: room is never overestimated).
    fn beam_room(&self, request: &ReplyRequest, prompt_tokens: usize) -> usize {
        (self.n_ctx() / request.sampling.beam_width.max(1) as usize).saturating_sub(prompt_tokens + 1)
    }

    /// Extends every beam search by the batch just decoded, copies the lanes of beams that
    /// forked, and ends the searches that are done (or cancelled, or out of room).
    fn expand_beams(&mut self) {
        let n_ctx = self.n_ctx();
        let mut i = 0;
        while i < self.beams.len() {
            let forks = self.beams[i].expand(&self.context, self.model);
            for Fork { from, to } in forks {
                let (from, to) = (self.beams[i].lanes[from], self.beams[i].lanes[to]);
                self.clear_slot(to);
                let (from_seq, to_seq) = (self.slots[from].seq, self.slots[to].seq);
                if self.context.copy_kv_cache_seq(from_seq, to_seq, None, None).is_ok() {
                    self.slots[to].cached = self.slots[from].cached.clone();
                }
            }
            let beam = &self.beams[i];
            let cancelled = beam.request.cancel.is_cancelled() || beam.events.is_closed();
            let full = beam.prompt.is_empty() && self.used_cells() + beam.lanes.len() >= n_ctx;
            if beam.is_done() || cancelled || full {
                let beam = self.beams.remove(i);
                for &lane in &beam.lanes {
                    // Only the first lane keeps its cells (the conversation's cache); the others
                    // held beams no one will continue.
                    if lane != beam.lanes[0] {
                        self.clear_slot(lane);
                    }
                    self.release(lane);
                }
                beam.finish(self.model, cancelled);
            } else {
                i += 1;
            }
        }
    }

    fn release(&mut self, slot: usize) {
        self.clock += 1;
        let slot = &mut self.slots[slot];
        slot.busy = false;
        slot.used_at = self.clock;
    }

    /// Every reply in hand fails (llama.cpp refused a batch); the cache is emptied.
    fn fail_all(&mut self, error: &BackendError) {
        self.context.clear_kv_cache();
        for slot in &mut self.slots {
            slot.empty();
            slot.busy = false;
        }
        for reply in self.running.drain(..) {
            let _ = reply.events.send(GenEvent::Failed(error.clone()));
        }
        for beam in self.beams.drain(..) {
            let _ = beam.events.send(GenEvent::Failed(error.clone()));
        }
    }

    /// The idle slot for a prompt: its conversation's own, else (for a one-off prompt) the one
    /// sharing the longest opening with it, else an empty one, else the least recently used.
    fn choose_slot(&self, conversation: Option<ConversationId>, tokens: &[LlamaToken]) -> usize {
        let idle = || self.slots.iter().enumerate().filter(|(_, s)| !s.busy);
        let own = match conversation {
            Some(c) => idle().find(|(_, s)| s.owner == Some(c)).map(|(i, _)| i),
            None => idle()
                .filter(|(_, s)| s.owner.is_none())
                .map(|(i, s)| (i, shared_prefix(&s.cached, tokens)))
                .filter(|&(_, shared)| shared > 0)
                .max_by_key(|&(_, shared)| shared)
                .map(|(i, _)| i),
        };
        own.or_else(|| idle().min_by_key(|(_, s)| (!s.cached.is_empty(), s.used_at)).map(|(i, _)| i))
            .expect("a slot is free whenever a reply is started")
    }

    /// Moves the conversations' caches of idle slots other than `keep` to memory: a chat alone
    /// attends over no other chat's cells, and the others stay a restore away. (Its cells then
    /// lie in position order, as without any cache: llama.cpp fills the lowest free cells, and
    /// attention summed in another order can part a seeded reply at a near-tie.) A one-off
    /// prompt's cache (a server client's) stays until its cells are needed, for its next turn.
    fn park_idle_conversations_but(&mut self, keep: usize) {
        for slot in 0..self.slots.len() {
            let Slot { busy, owner, cached, .. } = &self.slots[slot];
            if slot != keep && !busy && owner.is_some() && !cached.is_empty() {
                self.park(slot);
            }
        }
    }

    /// Whether `slot` can take `tokens` and a reply of up to `max_tokens` (at most a quarter of
    /// the context), emptying other idle slots if need be.
    fn room_for(&mut self, slot: usize, tokens: &[LlamaToken], max_tokens: u32) -> bool {
        let reserve = (max_tokens as usize).min(self.n_ctx() / 4);
        let cached = &self.slots[slot].cached;
        let kept = shared_prefix(cached, tokens);
        // The slot's own tokens past the shared opening are dropped when it starts.
        let need = (tokens.len() - kept + reserve).saturating_sub(cached.len() - kept);
        self.make_room(slot, need)
    }

    /// Empties idle slots other than `keep`, least recently used first, until `need` cells are
    /// free. False if the replies running leave too little.
    fn make_room(&mut self, keep: usize, need: usize) -> bool {
        loop {
            if self.n_ctx().saturating_sub(self.used_cells()) >= need {
                return true;
            }
            let victim = self
                .slots
                .iter()
                .enumerate()
                .filter(|(i, s)| *i != keep && !s.busy && !s.cached.is_empty())
                .min_by_key(|(_, s)| s.used_at)
                .map(|(i, _)| i);
            match victim {
                Some(slot) => self.park(slot),
                None => return false,
            }
        }
    }

    /// Moves a slot's cache to memory (if it is a conversation's) and empties the slot.
    fn park(&mut self, slot: usize) {
        if let Some(owner) = self.slots[slot].owner.take()
            && let Some(state) = self.snapshot(slot)
            && let Some(memory) = self.memory.as_mut()
        {
            memory.park(owner, state);
        }
        self.clear_slot(slot);
    }

    /// Decodes the step's batch. A one-token step of a sampled reply runs on the thread count
    /// `decode_threads` picks, and is timed for it; its batches read on every core unless the
    /// chooser saw the core it would add taken. A greedy or seeded reply always reads and writes on
    /// every core: llama.cpp's sums (flash attention's among them) depend on the thread count, so a
    /// near-tie could otherwise go another way from one run to the next.
    fn decode_step(&mut self) -> Result<(), DecodeError> {
        let sampled = self.running.iter().all(|r| !reproducible(&r.request.sampling));
        let tuned = sampled && self.batch.n_tokens() == 1;
        let decode = if tuned { self.decode_threads.next() } else { self.decode_threads.most() };
        let batch = if sampled { self.decode_threads.batch() } else { self.decode_threads.most() };
        if (decode, batch) != (self.threads.decode, self.threads.batch) {
            self.threads.decode = decode;
            self.threads.batch = batch;
            self.context.set_n_threads(decode as i32, batch as i32);
        }
        let started = Instant::now();
        let decoded = self.context.decode(&mut self.batch);
        if tuned {
            self.decode_threads.record(started.elapsed(), idle_cores::read);
        }
        decoded
    }

    fn clear_slot(&mut self, slot: usize) {
        let _ = self.context.clear_kv_cache_seq(Some(self.slots[slot].seq as u32), None, None);
        self.slots[slot].empty();
    }

    /// Makes `slot` the cache of `conversation`: the one in place goes to memory for its own
    /// conversation, and `conversation`'s own comes back if it shares more with `prompt` than
    /// what is in place. Says where the cache now comes from.
    fn switch_to(&mut self, slot: usize, conversation: Option<ConversationId>, prompt: &[LlamaToken]) -> PromptSource {
        if conversation.is_some() && conversation == self.slots[slot].owner {
            return PromptSource::Live;
        }
        let previous = std::mem::replace(&mut self.slots[slot].owner, conversation);
        if let Some(previous) = previous
            && let Some(state) = self.snapshot(slot)
            && let Some(memory) = self.memory.as_mut()
        {
            memory.park(previous, state);
        }
        let Some(saved) = conversation.and_then(|c| self.memory.as_mut().and_then(|m| m.take(c))) else {
            return if conversation.is_none() && !self.slots[slot].cached.is_empty() { PromptSource::Live } else { PromptSource::New };
        };
        let (saved, from) = saved;
        let saved_tokens: Vec<LlamaToken> = saved.tokens.iter().map(|&t| LlamaToken(t)).collect();
        if shared_prefix(&saved_tokens, prompt) > shared_prefix(&self.slots[slot].cached, prompt)
            && self.restore(slot, &saved.data, saved_tokens, saved.checkpoints)
        {
            return from;
        }
        PromptSource::New
    }

    /// A slot's cache as bytes, with its tokens; `None` when empty or llama.cpp wrote other
    /// than it said.
    fn snapshot(&self, slot: usize) -> Option<SavedState> {
        let Slot { seq, cached, checkpoints, .. } = &self.slots[slot];
        if cached.is_empty() {
            return None;
        }
        let data = self.seq_state(*seq, LlamaStateSeqFlags::empty())?;
        Some(SavedState { tokens: cached.iter().map(|t| t.0).collect(), data, checkpoints: checkpoints.list().to_vec() })
    }

    /// A sequence's state as bytes (`PARTIAL_ONLY`: the part that cannot be cut back); `None`
    /// when llama.cpp wrote other than it said.
    fn seq_state(&self, seq: i32, flags: LlamaStateSeqFlags) -> Option<Vec<u8>> {
        let size = self.context.state_seq_get_size_ext(seq, flags);
        let mut data = vec![0u8; size];
        // SAFETY: `data` holds exactly the size llama.cpp just reported for this sequence.
        let written = unsafe { self.context.state_seq_get_data_ext(data.as_mut_ptr(), seq, flags) };
        (written == size).then_some(data)
    }

    /// Whether `slot`'s prompt reading has reached its next mark.
    fn checkpoint_due(&self, slot: usize) -> bool {
        let slot = &self.slots[slot];
        slot.marks.first() == Some(&slot.cached.len())
    }

    /// Saves the part of `slot`'s state that cannot be cut back, to come back to this point.
    fn take_checkpoint(&mut self, slot: usize) {
        let at = self.slots[slot].cached.len();
        let data = self.seq_state(self.slots[slot].seq, LlamaStateSeqFlags::PARTIAL_ONLY);
        let slot = &mut self.slots[slot];
        slot.marks.retain(|&mark| mark > at);
        if let Some(data) = data {
            slot.checkpoints.add(Checkpoint { at, opens_message: slot.message_mark == Some(at), data });
        }
    }

    /// Where the prompt `tokens`, about to be read into `slot`, takes checkpoints (none for a
    /// model whose cache is cut back freely, nor when caches are not reused).
    fn set_marks(&mut self, slot: usize, messages: &[ChatMessage], continue_last: bool, tokens: &[LlamaToken]) {
        let wanted = self.reuse_kv && self.cut_back.needs_checkpoints();
        let start = if wanted { self.message_start(messages, continue_last, tokens) } else { None };
        let from = self.slots[slot].cached.len();
        let slot = &mut self.slots[slot];
        slot.marks = if wanted { checkpoints::marks(tokens.len(), from, start) } else { Vec::new() };
        slot.message_mark = start;
    }

    /// The token where the user's last message starts in `tokens`, when a token starts there
    /// (counted from the end: the text before it may be spelled as the cache spells it).
    fn message_start(&self, messages: &[ChatMessage], continue_last: bool, tokens: &[LlamaToken]) -> Option<usize> {
        let tail = self.own_tail(messages, continue_last);
        if tail == 0 || tail == usize::MAX {
            return None;
        }
        let vocab = self.model.vocab();
        let mut bytes = 0;
        for (at, &token) in tokens.iter().enumerate().rev() {
            bytes += vocab.token_to_piece(token, true, None).len();
            if bytes >= tail {
                return (bytes == tail).then_some(at);
            }
        }
        None
    }

    /// Replaces a slot's cache with a saved one; on failure the slot is left empty.
    fn restore(&mut self, slot: usize, data: &[u8], tokens: Vec<LlamaToken>, checkpoints: Vec<Checkpoint>) -> bool {
        self.clear_slot(slot);
        let seq = self.slots[slot].seq;
        // SAFETY: these bytes came from `snapshot` on this model and cache layout: straight from
        // RAM, or from a state file whose key and checksum `kv_memory::decode` verified.
        let restored = unsafe { self.context.state_seq_set_data_ext(data, seq, LlamaStateSeqFlags::empty()) };
        if restored {
            self.slots[slot].cached = tokens;
            self.slots[slot].checkpoints = Checkpoints::new(checkpoints);
        } else {
            tracing::warn!("llama.cpp refused a saved KV state; the prompt is prefilled");
            self.clear_slot(slot);
        }
        restored
    }

    /// The prompt's tokens, after leaving out earlier messages as the overflow policy allows so
    /// that a reply has room (up to `max_tokens`, at most a quarter of the context).
    fn fit_prompt(&self, request: &ReplyRequest, n_ctx: usize) -> Result<Fitted, BackendError> {
        let reserve = (request.sampling.max_tokens as usize).min(n_ctx / 4);
        let overflow = |tokens: usize| BackendError::ContextOverflow { tokens, n_ctx: n_ctx as u32 };
        if let Some(raw) = &request.raw_prompt {
            // Plain text has no turns to leave out: it fits, or it is refused.
            let tokens = self.tokenize(raw);
            return match tokens.len() {
                0 => Err(BackendError::InvalidRequest("the prompt is empty".into())),
                n if n + reserve <= n_ctx || (request.sampling.overflow == OverflowPolicy::StopAtLimit && n < n_ctx) => {
                    Ok(Fitted { tokens, dropped: 0, notice: None })
                }
                n => Err(overflow(n)),
            };
        }
        let Rendered { text, notice } = self.prompt(&request.messages, request.continue_last)?;
        let tokens = self.tokenize(&text);
        if tokens.len() + reserve <= n_ctx {
            return Ok(Fitted { tokens, dropped: 0, notice });
        }
        if request.sampling.overflow == OverflowPolicy::StopAtLimit {
            // The prompt fits; the reply stops when the context is full.
            return if tokens.len() < n_ctx { Ok(Fitted { tokens, dropped: 0, notice }) } else { Err(overflow(tokens.len())) };
        }
        let mut fitted = None;
        let kept = fit_context(&request.messages, request.sampling.overflow, |messages| {
            let Ok(prompt) = self.prompt(messages, request.continue_last) else { return false };
            let candidate = self.tokenize(&prompt.text);
            let fits = candidate.len() + reserve <= n_ctx;
            if fits {
                fitted = Some(candidate);
            }
            fits
        });
        match (kept, fitted) {
            (Some((_, dropped)), Some(tokens)) => Ok(Fitted { tokens, dropped, notice }),
            _ => Err(overflow(tokens.len())),
        }
    }

    /// The prompt for `messages`; when continuing, the unfinished reply is written after the
    /// assistant's turn opens, so the model carries on from its last word.
    fn prompt(&self, messages: &[ChatMessage], continue_last: bool) -> Result<Rendered, BackendError> {
        match messages.split_last() {
            Some((last, before)) if continue_last && last.role == Role::Assistant => {
                let mut rendered = self.render(before)?;
                rendered.text.push_str(&last.content);
                Ok(rendered)
            }
            _ => self.render(messages),
        }
    }

    fn render(&self, messages: &[ChatMessage]) -> Result<Rendered, BackendError> {
        self.renderer.render(self.model, messages)
    }

    fn tokenize(&self, prompt: &str) -> Vec<LlamaToken> {
        let vocab = self.model.vocab();
        // Templates usually write the BOS token themselves; adding another would shift the model.
        let bos = special_text(self.model, vocab.bos());
        let add_bos = vocab.should_add_bos() && (bos.is_empty() || !prompt.starts_with(&bos));
        vocab.tokenize(prompt.as_bytes(), add_bos, true)
    }

    /// The prompt for `messages` spelled as `slot`'s cache spells the text they share (see
    /// [`prefix`]) before the user's last message, which is read in its own tokens: a typed
    /// message is read as the same message pasted.
    fn follow_cache(&self, slot: usize, messages: &[ChatMessage], continue_last: bool, tokens: Vec<LlamaToken>) -> Vec<LlamaToken> {
        let cached = &self.slots[slot].cached;
        let same = shared_prefix(cached, &tokens);
        if same == cached.len() || same == tokens.len() {
            return tokens; // Nothing spelled otherwise.
        }
        let vocab = self.model.vocab();
        prefix::follow_cache(
            cached,
            tokens,
            self.own_tail(messages, continue_last),
            |token| vocab.token_to_piece(token, true, None),
            |text| vocab.tokenize(text, false, true),
        )
    }

    /// The bytes at the prompt's end from the user's last message on (its text and the turn's
    /// closing), as the template writes them after that message alone; 0 when the prompt does
    /// not end with the user's message, everything when the template cannot say.
    fn own_tail(&self, messages: &[ChatMessage], continue_last: bool) -> usize {
        match messages.last() {
            Some(last) if last.role == Role::User && !continue_last && !last.content.is_empty() => self
                .render(std::slice::from_ref(last))
                .ok()
                .and_then(|prompt| prompt.text.rfind(&last.content).map(|at| prompt.text.len() - at))
                .unwrap_or(usize::MAX),
            _ => 0,
        }
    }

    /// How many of the last `tokens` of `prompt` write what an unfinished `message` may yet
    /// change (see [`prefix::unsettled_bytes`]).
    fn unsettled_tokens(&self, prompt: &str, message: &str, tokens: &[LlamaToken]) -> usize {
        let vocab = self.model.vocab();
        prefix::tokens_writing_tail(tokens, prefix::unsettled_bytes(prompt, message), |token| vocab.token_to_piece(token, true, None))
    }

    /// Keeps the longest prefix of `tokens` cached in `slot` and drops the rest of it; returns
    /// its length. At least one token is always left to decode, since sampling needs fresh logits.
    fn reuse_prefix(&mut self, slot: usize, tokens: &[LlamaToken]) -> usize {
        let cached = &self.slots[slot].cached;
        let mut keep = if self.reuse_kv { shared_prefix(cached, tokens) } else { 0 };
        keep = keep.min(tokens.len().saturating_sub(1));
        if keep < cached.len() {
            keep = self.cut_back(slot, keep);
        }
        keep
    }

    /// Cuts `slot`'s cache back to its first `keep` tokens where the model's cache allows it,
    /// else to its latest checkpoint before them, else to nothing (said in the log: the whole
    /// prompt is read again). Returns the tokens kept.
    fn cut_back(&mut self, slot: usize, keep: usize) -> usize {
        let seq = self.slots[slot].seq;
        let free = match self.cut_back {
            CutBack::Free => true,
            // The window before the cut must still be cached: the token at `keep` attends to the
            // positions after `keep - n_swa`.
            CutBack::Window(n_swa) => {
                usize::try_from(self.context.kv_cache_seq_pos_min(seq)).is_ok_and(|min| min <= (keep + 1).saturating_sub(n_swa))
            }
            CutBack::Never => keep == 0,
        };
        if free && self.context.kv_cache_seq_rm(seq, Some(keep as u32), None).is_ok() {
            let slot = &mut self.slots[slot];
            slot.cached.truncate(keep);
            slot.checkpoints.cut(keep);
            return keep;
        }
        let back_to = self.slots[slot].checkpoints.at_or_before(keep).and_then(|checkpoint| {
            // SAFETY: these bytes came from `take_checkpoint` on this context, or from a state
            // file whose key and checksum `kv_memory::decode` verified.
            let set = unsafe { self.context.state_seq_set_data_ext(&checkpoint.data, seq, LlamaStateSeqFlags::PARTIAL_ONLY) };
            (set && self.context.kv_cache_seq_rm(seq, Some(checkpoint.at as u32), None).is_ok()).then_some(checkpoint.at)
        });
        match back_to {
            Some(at) => {
                tracing::debug!(shared = keep, checkpoint = at, read_again = keep - at, "cache cut back to a checkpoint");
                let slot = &mut self.slots[slot];
                slot.cached.truncate(at);
                slot.checkpoints.cut(at);
                at
            }
            None => {
                tracing::info!(
                    cached = self.slots[slot].cached.len(),
                    shared = keep,
                    "this model's cache cannot be cut back to the text it shares with the prompt and no checkpoint comes \
                     before it: the whole prompt is read again"
                );
                self.clear_slot(slot);
                0
            }
        }
    }

    /// Takes the longest opening of `tokens` that another slot holds when it is longer than the
    /// `kept` tokens `slot` has: the cells are shared between the sequences (`seq_cp` in the
    /// unified cache), not read again — a system prompt many chats or clients share is read
    /// once. Returns how many tokens `slot` now has. Caches that are not cut back freely keep their own.
    fn borrow_prefix(&mut self, slot: usize, tokens: &[LlamaToken], kept: usize) -> usize {
        // A sliding window's cells are not all kept (a restored state holds only its window).
        if !self.reuse_kv || self.cut_back.needs_checkpoints() {
            return kept;
        }
        let limit = tokens.len().saturating_sub(1); // The last token is decoded for its logits.
        let donor = (0..self.slots.len())
            .filter(|&i| i != slot)
            .map(|i| (i, shared_prefix(&self.slots[i].cached, tokens).min(limit)))
            .max_by_key(|&(_, shared)| shared)
            .filter(|&(_, shared)| shared > kept);
        let Some((donor, shared)) = donor else { return kept };
        self.clear_slot(slot);
        let (from, to) = (self.slots[donor].seq, self.slots[slot].seq);
        if self.context.copy_kv_cache_seq(from, to, None, Some(shared as u32)).is_err() {
            return 0;
        }
        self.slots[slot].cached = self.slots[donor].cached[..shared].to_vec();
        shared
    }

    /// Decodes `tokens` at `slot`'s next positions, alone in the batch, without logits.
    fn decode_alone(&mut self, slot: usize, tokens: &[LlamaToken]) -> Result<(), BackendError> {
        self.batch.clear();
        let Slot { seq, cached, .. } = &self.slots[slot];
        for (i, &token) in tokens.iter().enumerate() {
            self.batch.add(token, (cached.len() + i) as i32, &[*seq], false).map_err(|e| BackendError::Engine(e.to_string()))?;
        }
        match self.context.decode(&mut self.batch) {
            Ok(()) => {
                self.slots[slot].cached.extend_from_slice(tokens);
                Ok(())
            }
            // Stopped for a reply: llama.cpp dropped the batch's positions, so the cache holds what
            // it held before — checked, since a reply trusts `cached` to the token.
            Err(DecodeError::Unknown(interrupt::ABORTED)) if self.holds_exactly(slot) => {
                tracing::debug!(tokens = tokens.len(), "draft chunk stopped for a reply");
                Err(BackendError::Engine("stopped for a reply".into()))
            }
            Err(e) => {
                // The cache may now hold part of the batch; forget this slot rather than guess.
                self.clear_slot(slot);
                Err(BackendError::Engine(format!("decoding failed: {e}")))
            }
        }
    }

    /// Whether the cache holds `slot`'s cached positions and none after them.
    fn holds_exactly(&self, slot: usize) -> bool {
        let Slot { seq, cached, .. } = &self.slots[slot];
        i64::from(self.context.kv_cache_seq_pos_max(*seq)) + 1 == cached.len() as i64
    }
}

/// How many tokens two sequences share from the start.
pub(crate) fn shared_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Whether a reply must come out the same each time it is asked for: greedy, or seeded.
fn reproducible(sampling: &SamplingParams) -> bool {
    sampling.temperature <= 0.0 || sampling.seed.is_some()
}
