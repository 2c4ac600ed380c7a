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
    BackendError, CacheBudgets, ChatMessage, FinishReason, GenEvent, OverflowPolicy, PromptSource, ReasoningFormat, ReplyRequest,
    ReplyStats, Role, Speculative, Strategy, fit_context,
};

use crate::LoadParams;
use crate::checkpoints::{self, Checkpoint, Checkpoints, CutBack};
use crate::decoding::{AfterDecode, BeamReply, Decoder, Fork, Group, Lane, LogitsAt, Member, Reply, Room, Written};
use crate::draft_threads::DraftThreads;
use crate::drafter::Drafter;
use crate::interrupt::{self, DraftInterrupt};
use crate::kv_memory::{ConversationId, KvMemory, SavedState};
use crate::load::{Resolved, Threads};
use crate::prefix::{self, shared_prefix};
use crate::sampler;
use crate::threads::DecodeThreads;
use crate::tools::CallsAfter;
use crate::vision::{self, Projector, PromptImages};

mod cache;
mod decode;
mod prompt;
mod read_ahead;
mod slot;
mod strategies;

use prompt::{PromptAsk, Rendered, Renderer, opens_reasoning, special_text};
use slot::Slot;

/// A prompt fitted to the context: its tokens, the messages left out, and how it was written.
struct Fitted {
    tokens: Vec<LlamaToken>,
    facts: PromptFacts,
    /// The images its image tokens stand for.
    images: PromptImages,
}

/// What fitting a prompt tells its reply's stats.
#[derive(Clone, Default)]
struct PromptFacts {
    /// Earlier messages left out so that the reply has room.
    dropped: usize,
    /// How the prompt was written, if the chat template could not be used as it is.
    notice: Option<String>,
    /// Tokens of the question as the model reads it (`ReplyStats::question_tokens`), and of each
    /// of its documents (`ReplyStats::document_tokens`).
    question_tokens: Option<u32>,
    document_tokens: Option<Vec<u32>>,
}

/// KV sequences in one context: replies and consensus candidates written at once.
pub const SEQUENCES: u32 = 8;
/// Replies one context serves at once (a consensus reply is one, however many candidates it
/// writes); a reply beyond these waits for one to end.
pub const PARALLEL_REPLIES: usize = 4;
/// The shortest candidate a consensus reply is allowed to be cut to for room in the context.
const MIN_CANDIDATE_TOKENS: usize = 16;

/// A reply asked for, its prompt fitted, waiting for a slot.
struct Queued {
    request: ReplyRequest,
    events: UnboundedSender<GenEvent>,
    tokens: Vec<LlamaToken>,
    facts: PromptFacts,
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
    /// The replies being decoded, each by its strategy (see [`crate::decoding`]).
    running: Vec<Box<dyn Decoder>>,
    /// Consensus replies being written, and their candidates waiting for the first to read the prompt.
    groups: Vec<Group>,
    waiting_members: Vec<Queued>,
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
    /// The model's image projector, when it reads images.
    projector: Option<Projector>,
    /// The images of the prompts in hand, by the token that stands for each (`vision`).
    images: PromptImages,
}

impl<'m> Session<'m> {
    /// `n_seq`: the sequences `context` was created for (at most that many replies at once).
    /// `resolved`: what `context` was created with (`load::context_params`).
    pub fn new(
        model: &'m LlamaModel,
        context: LlamaContext<'m>,
        params: &LoadParams,
        resolved: &Resolved,
        memory: Option<KvMemory>,
        n_seq: u32,
        projector: Option<Projector>,
    ) -> Self {
        let (threads, swa_full) = (resolved.threads, resolved.swa_full);
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
            projector,
            images: PromptImages::default(),
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
        !self.running.is_empty() || !self.queued.is_empty() || !self.groups.is_empty()
    }

    /// Generates a reply and waits for it (and any other reply in hand) to end; its events
    /// always end with `Finished` or `Failed`.
    pub fn reply(&mut self, request: ReplyRequest, events: &UnboundedSender<GenEvent>) {
        self.submit(request, events.clone());
        while self.is_busy() {
            self.step();
        }
    }

    /// Tool results as the model's template reads them: as the user's `<tool_response>` blocks,
    /// but for a template that reads them apart (gpt-oss's answers each call by name).
    fn read_tools(&self, messages: &mut [ChatMessage]) {
        if !self.renderer.tool_format().reads_calls_apart() {
            hearth_core::read_tools_locally(messages);
        }
    }

    /// Queues a reply; [`Session::step`] serves it. A prompt that cannot fit fails at once.
    pub fn submit(&mut self, mut request: ReplyRequest, events: UnboundedSender<GenEvent>) {
        let asked_at = Instant::now();
        // Asked before tool results are written as the user's (for templates that read them so).
        let asks = request.raw_prompt.is_none() && !request.continue_last && request.messages.last().is_some_and(|m| m.role == Role::User);
        self.read_tools(&mut request.messages);
        if vision::has_images(&request.messages) {
            // Drafts are text: neither a draft model nor the prompt's n-grams can write an image's tokens.
            request.sampling.speculative = Speculative::Off;
        }
        let fitted = self.fit_prompt(&request, self.n_ctx());
        let queued = match fitted.and_then(|fitted| self.load_drafter(&request).map(|()| fitted)) {
            Ok(Fitted { tokens, mut facts, images }) => {
                if let Some(question) = request.messages.last().filter(|_| asks) {
                    facts.question_tokens = self.question_tokens(question, &images);
                    facts.document_tokens = self.document_tokens(question);
                }
                self.images.0.extend(images.0);
                Queued { request, events, tokens, facts, asked_at, member: None }
            }
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
        let requests = self.running.iter().map(|r| r.request()).chain(self.queued.iter().chain(&self.waiting_members).map(|q| &q.request));
        let in_use: Vec<&String> = requests.filter_map(|r| r.sampling.draft_model.as_ref()).collect();
        self.drafters.retain(|d| in_use.contains(&&d.path));
        let drafter = Drafter::load(path, self.model, &self.params, self.n_ctx() as u32, self.slots.len() as u32)?;
        self.drafters.push(drafter);
        Ok(())
    }

    /// Replies being served that count against [`PARALLEL_REPLIES`]: a consensus reply counts
    /// once, by its first candidate.
    fn serving(&self) -> usize {
        self.running.iter().filter(|r| r.member().is_none_or(|m| m.index == 0)).count()
    }

    /// Starts what waits and fits, then decodes one batch: what every reply writes (its next
    /// token, its beams', drafts where there is room) and as much of a prompt being read as the
    /// batch has room for.
    pub fn step(&mut self) {
        self.admit();
        if self.running.is_empty() {
            self.poll_groups();
            return;
        }
        let n_ctx = self.n_ctx();
        let writing: usize = self.running.iter().map(|d| d.writing()).sum();
        if self.used_cells() + writing >= n_ctx {
            // Idle slots give their cells up before a reply is cut short for want of them.
            self.make_room(usize::MAX, writing + 1);
        }
        let mut used = self.used_cells();
        let mut ended: Vec<(usize, FinishReason)> = Vec::new();
        let mut failed: Vec<(usize, BackendError)> = Vec::new();
        let mut added: Vec<Vec<(usize, Vec<LlamaToken>)>> = self.running.iter().map(|_| Vec::new()).collect();
        self.batch.clear();
        let mut writers_after = writing;
        for (i, decoder) in self.running.iter_mut().enumerate() {
            if decoder.request().cancel.is_cancelled() || decoder.events().is_closed() {
                ended.push((i, FinishReason::Cancelled));
                continue;
            }
            let writes = decoder.writing();
            if writes == 0 {
                continue;
            }
            writers_after -= writes;
            let slots = &self.slots;
            let lanes: Vec<Lane<'_>> = decoder.lanes().iter().map(|&s| slots[s].lane()).collect();
            let room = Room {
                cells: n_ctx.saturating_sub(used),
                batch: self.n_batch.saturating_sub(self.batch.n_tokens() as usize),
                writers_after,
                drafters: self.speculate.then_some(&mut self.drafters[..]),
            };
            match decoder.write(&mut self.batch, &lanes, room) {
                Written::Full => ended.push((i, FinishReason::Length)),
                Written::Tokens(tokens) => {
                    used += tokens.iter().map(|(_, t)| t.len()).sum::<usize>();
                    added[i] = tokens;
                }
            }
        }
        for (i, decoder) in self.running.iter_mut().enumerate() {
            let room = self.n_batch.saturating_sub(self.batch.n_tokens() as usize);
            if room == 0 {
                break;
            }
            if decoder.prompt().is_empty() || !added[i].is_empty() || ended.iter().any(|(e, _)| *e == i) {
                continue;
            }
            let lane = decoder.lanes()[0];
            if let Some(&image) = decoder.prompt().first().filter(|&&t| vision::is_image(t)) {
                // An image is read on its own (its embeddings in a decode of their own), before
                // this step's batch; the text after it, from the next step.
                let slot = &mut self.slots[lane];
                match self.images.read(image, self.projector.as_mut(), &mut self.context, (slot.next_pos(), slot.seq), self.n_batch) {
                    Ok(n) => slot.extend(&decoder.take_prompt(n)),
                    Err(error) => failed.push((i, error)),
                }
                continue;
            }
            let slot = &self.slots[lane];
            let text = decoder.prompt().iter().take_while(|&&t| !vision::is_image(t)).count();
            let chunk = decoder.take_prompt(slot.readable(room.min(text)));
            let read_all = decoder.prompt().is_empty();
            let first = slot.next_pos();
            for (k, &token) in chunk.iter().enumerate() {
                let logits = read_all && k + 1 == chunk.len();
                // Within n_batch by construction; a failure here would be a bug in this loop.
                let _ = self.batch.add(token, (first + k) as i32, &[slot.seq], logits);
            }
            if read_all {
                decoder.prompt_read(self.batch.n_tokens() - 1);
            }
            added[i] = vec![(0, chunk)];
        }
        if self.batch.n_tokens() > 0
            && let Err(e) = self.decode_step()
        {
            self.fail_all(&BackendError::Engine(format!("decoding failed: {e}")));
            return;
        }
        for (decoder, added) in self.running.iter().zip(added) {
            for (lane, tokens) in added {
                self.slots[decoder.lanes()[lane]].extend(&tokens);
            }
        }
        let due: Vec<usize> =
            self.running.iter().flat_map(|d| d.lanes().iter().copied()).filter(|&slot| self.checkpoint_due(slot)).collect();
        for slot in due {
            self.take_checkpoint(slot);
        }
        for i in 0..self.running.len() {
            let AfterDecode { forks, rejected, finish } = self.running[i].after_decode(&self.context, self.model);
            let lanes = self.running[i].lanes().to_vec();
            for Fork { from, to } in forks {
                self.fork(lanes[from], lanes[to]);
            }
            if rejected > 0 && !self.drop_rejected(lanes[0], rejected) {
                ended.push((i, FinishReason::Length));
            }
            if let Some(reason) = finish {
                ended.push((i, reason));
            }
        }
        ended.extend(failed.iter().map(|(i, _)| (*i, FinishReason::Cancelled)));
        ended.sort_by_key(|(i, _)| std::cmp::Reverse(*i));
        ended.dedup_by_key(|(i, _)| *i);
        for (i, reason) in ended {
            let decoder = self.running.remove(i);
            let error = failed.iter().position(|(f, _)| *f == i).map(|at| failed.swap_remove(at).1);
            for (k, &lane) in decoder.lanes().iter().enumerate() {
                // Only the first lane keeps its cells (the conversation's cache); the others held
                // beams no one will continue — nor does a reply that failed part-way into its prompt.
                if k > 0 || error.is_some() {
                    self.clear_slot(lane);
                }
                self.release(lane);
            }
            match error {
                Some(error) => drop(decoder.events().send(GenEvent::Failed(error))),
                None => decoder.finish(reason, self.model),
            }
        }
        self.release_members();
        self.poll_groups();
        if !self.is_busy() {
            self.images.0.clear();
        }
    }

    /// Lane `to` takes lane `from`'s cells (a beam forked): `seq_cp` tags cells, it copies nothing.
    fn fork(&mut self, from: usize, to: usize) {
        self.clear_slot(to);
        let (from_seq, to_seq) = (self.slots[from].seq, self.slots[to].seq);
        if self.context.copy_kv_cache_seq(from_seq, to_seq, None, None).is_ok() {
            self.slots[to].cached = self.slots[from].cached.clone();
        }
    }

    /// Drops the last `rejected` cells of `slot` (drafts the sampler did not choose); false when
    /// llama.cpp could not.
    fn drop_rejected(&mut self, slot: usize, rejected: usize) -> bool {
        let slot = &mut self.slots[slot];
        let keep = slot.cached.len() - rejected;
        let removed = self.context.kv_cache_seq_rm(slot.seq, Some(slot.position(keep)), None).is_ok();
        slot.cut(keep);
        removed
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
            if self.running.is_empty() {
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
        let Queued { request, events, tokens, facts, asked_at, member } = queued;
        let format = self.renderer.tool_format();
        let reasoning = if request.raw_prompt.is_none() { self.renderer.reasoning() } else { ReasoningFormat::None };
        let opens_reasoning = !request.continue_last && request.raw_prompt.is_none() && opens_reasoning(self.model, &tokens, reasoning);
        let think_opened = opens_reasoning && reasoning != ReasoningFormat::Channels;
        let first_call = match format.call_shape() {
            Some(hearth_core::CallShape::List(_)) => crate::template::calls_before(&request.messages, reasoning, format),
            _ => 0,
        };
        let after = CallsAfter { reasoning_opened: think_opened, thinking: PromptAsk::of(&request).thinking(), first_call };
        let tools = match request.tools.as_ref().map(|offered| crate::tools::grammar(offered, format, after)).transpose() {
            Ok(tools) => tools.flatten(),
            Err(error) => {
                let _ = events.send(GenEvent::Failed(error));
                return;
            }
        };
        let sampler = match sampler::build(self.model, &request.sampling, tools.as_ref(), self.n_ctx() as u32) {
            Ok(sampler) => sampler,
            Err(error) => {
                let _ = events.send(GenEvent::Failed(error));
                return;
            }
        };
        // Calls in a family's shape (Llama 3.x's, Mistral's): read into Hearth's blocks when a call may be made.
        let call_shape = tools.as_ref().and_then(|_| format.call_shape());
        // A consensus candidate's logits come from its group's batch.
        let (prompt, stats, saved_logits) = self.take_prompt(slot, &request, tokens, facts, member.is_none());
        tracing::debug!(
            since_asked_ms = asked_at.elapsed().as_secs_f64() * 1000.0,
            prompt_tokens = stats.prompt_tokens,
            cached = stats.cached_tokens,
            source = ?stats.prompt_source,
            "reply started"
        );
        self.slots[slot].busy = true;
        let mut reply = Reply::new(slot, request, events, prompt, sampler, stats, asked_at);
        if reasoning == ReasoningFormat::Channels {
            reply.write_channels();
        }
        if let Some(shape) = call_shape {
            reply.read_calls(shape, self.model);
        }
        if let Some(markers) = self.renderer.think_markers().filter(|_| reasoning != ReasoningFormat::None) {
            reply.read_think_markers(markers, self.model);
        }
        if opens_reasoning {
            reply.open_reasoning();
        }
        reply.member = member;
        reply.logits_at = saved_logits.map(LogitsAt::Saved);
        self.running.push(Box::new(reply));
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
        for decoder in self.running.drain(..) {
            let _ = decoder.events().send(GenEvent::Failed(error.clone()));
        }
    }
}
