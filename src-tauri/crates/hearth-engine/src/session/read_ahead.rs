//! Reading ahead the draft the user is typing, chunk by chunk, on one thread fewer than a prompt
//! or on every core (`crate::draft_threads`), giving way to a reply.

use std::time::{Duration, Instant};

use hearth_core::{ReplyRequest, Role};

use super::{PromptAsk, Session};
use crate::vision::{PromptImages, is_image, within_image};

/// A draft is read ahead in chunks of 8 tokens first, then as many as the last chunk's pace reads
/// in `DRAFT_CHUNK_TIME` (at most 64, never fewer than 8): a reply asked for meanwhile waits for
/// at most half a chunk (one in its first half is stopped, `interrupt`), whatever the model and
/// the machine (on one thread a fixed 32-token chunk of a pasted message held a turn ~60 ms).
/// Each chunk is a pass over the weights, whatever its size (on a 2-core machine 4 tokens took
/// 54 ms on two threads and 3 tokens 46): a key's draft — the changed word, the turn's closing
/// and the reply's opening, 7 tokens in SmolLM2's template — is read in one pass, not two.
const FIRST_DRAFT_CHUNK: usize = 8;
const LAST_DRAFT_CHUNK: usize = 64;
const DRAFT_CHUNK_TIME: Duration = Duration::from_millis(25);

impl Session<'_> {
    /// Prefills a draft the user is still typing as if it were sent now (the conversation, the
    /// draft and the opening of the reply), chunk by chunk, stopping as soon as `preempted`
    /// says another request waits. The cache keeps what was read: when the user types on, only
    /// the tokens from where the text changed are dropped (a few, at the end: the message is
    /// always read in its own tokens, see [`Session::follow_cache`]), so at Enter little or nothing
    /// — after a pause, nothing: the logits after the draft are kept for the reply's first token
    /// — is left to read. A draft sent while keys still come
    /// (`continue_last`: the message is unfinished) is read up to its last word: the word, the
    /// turn's closing and the reply's opening would be read again at the next send. Only while no
    /// reply is in hand. The same reads ahead the turn of a reply's tool results while its calls
    /// run (the results empty, with the tools the next round offers): up to the first result's
    /// text, what follows is read again when they come.
    pub fn prefill_draft(&mut self, request: &ReplyRequest, preempted: impl Fn() -> bool) {
        self.draft_threads.arrived(Instant::now());
        let Some(last) = request.messages.last() else { return };
        let draft = last.role == Role::User && !last.content.trim().is_empty();
        let results = last.role == Role::Tool && !request.continue_last;
        if !self.reuse_kv || self.is_busy() || !(draft || results) || preempted() {
            return;
        }
        let mut messages = request.messages.clone();
        self.read_tools(&mut messages);
        let messages = &messages;
        let Ok(prompt) = self.prompt(messages, false, PromptAsk::of(request)).map(|rendered| rendered.text) else { return };
        let Ok((tokens, images)) = self.tokenize_messages(&prompt, messages) else { return };
        self.images = images;
        let n_ctx = self.context.n_ctx() as usize;
        if tokens.is_empty() || tokens.len() + (request.sampling.max_tokens as usize).min(n_ctx / 4) > n_ctx {
            return;
        }
        let slot = self.choose_slot(request.conversation, &tokens);
        self.park_idle_conversations_but(slot);
        if !self.room_for(slot, &tokens, request.sampling.max_tokens) {
            return;
        }
        self.switch_to(slot, request.conversation, &tokens);
        let tokens = self.follow_cache(slot, messages, false, tokens);
        let kept = self.reuse_prefix(slot, &tokens, true);
        self.borrow_prefix(slot, &tokens, kept);
        self.set_marks(slot, messages, false, &tokens);
        let mut read_to = tokens.len() - if request.continue_last { self.unsettled_tokens(&prompt, &last.content, &tokens) } else { 0 };
        while within_image(&tokens, read_to) {
            read_to -= 1; // Not into an image: it is read whole or not at all.
        }
        let suffix = tokens[self.slots[slot].cached.len().min(read_to)..read_to].to_vec();
        let reading = Instant::now();
        // A reply asked for meanwhile waits for the chunk being read (or stops it in its first
        // half). A draft is as often as not sent just before Enter (a paste, the last words), so
        // chunks take about DRAFT_CHUNK_TIME each, at the pace the last chunk was read (the
        // session's first is small: its pace is not known yet).
        let most = LAST_DRAFT_CHUNK.min(self.n_batch).max(FIRST_DRAFT_CHUNK);
        let chunk = |per_token: Option<f64>| {
            per_token.map_or(FIRST_DRAFT_CHUNK, |per_token| {
                ((DRAFT_CHUNK_TIME.as_secs_f64() / per_token.max(1e-6)) as usize).clamp(FIRST_DRAFT_CHUNK, most)
            })
        };
        let mut at = 0;
        // The user is typing: a core is left to the window, whose keys must echo at once, unless
        // one fewer would still be reading when the next key (or Enter) comes and every core
        // would be done by then (`draft_threads`).
        let every_core = self.draft_threads.every_core(suffix.len(), request.continue_last, self.threads.draft(), self.threads.batch);
        let readers = if every_core { self.threads.batch } else { self.threads.draft() };
        self.context.set_n_threads(self.threads.decode as i32, readers as i32);
        while at < suffix.len() {
            if is_image(suffix[at]) {
                if preempted() {
                    break;
                }
                let cached = (self.slots[slot].next_pos(), self.slots[slot].seq);
                let read = self.images.read(suffix[at], self.projector.as_mut(), &mut self.context, cached, self.n_batch);
                let Ok(n) = read else {
                    self.clear_slot(slot); // Part of an image may be in its cells.
                    break;
                };
                self.slots[slot].extend(&suffix[at..at + n]);
                at += n;
                continue;
            }
            let text = suffix[at..].iter().take_while(|&&t| !is_image(t)).count();
            let pace = self.draft_threads.chunk_pace(every_core);
            let end = at + self.slots[slot].readable((at + chunk(pace)).min(at + text) - at);
            let started = Instant::now();
            if let Some(interrupt) = &self.interrupt {
                interrupt.arm(pace.map(|per_token| Duration::from_secs_f64(per_token * (end - at) as f64)));
            }
            // The prompt's last token keeps its logits: at Enter the reply samples from them.
            let last = end == suffix.len() && read_to == tokens.len();
            if preempted() || self.decode_alone(slot, &suffix[at..end], last).is_err() {
                break;
            }
            if self.checkpoint_due(slot) {
                self.take_checkpoint(slot);
            }
            self.draft_threads.chunk_read(every_core, started.elapsed().as_secs_f64() / (end - at) as f64);
            at = end;
        }
        if let Some(interrupt) = &self.interrupt {
            interrupt.disarm();
        }
        self.context.set_n_threads(self.threads.decode as i32, self.threads.batch as i32);
        if at == suffix.len() {
            self.draft_threads.draft_read(every_core, reading.elapsed().as_secs_f64(), at);
        }
        tracing::debug!(
            tokens = tokens.len(),
            read = at,
            of = suffix.len(),
            ms = reading.elapsed().as_secs_f64() * 1000.0,
            threads = readers,
            "draft read ahead"
        );
        self.typed = request.conversation;
        self.images = PromptImages::default();
    }
}
