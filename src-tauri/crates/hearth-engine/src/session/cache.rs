//! Where each reply's KV cache lives: the slot a prompt goes to, room made by parking idle chats'
//! caches (RAM, then disk) and restoring them, the prefix a new prompt keeps (cut back to a
//! checkpoint where the model cannot drop cells freely) or borrows from another slot, and the
//! checkpoints taken on the way; what a reply's prompt takes of it (`take_prompt`).

use super::*;

impl<'m> Session<'m> {
    /// The idle slot for a prompt: its conversation's own, else (for a one-off prompt) the one
    /// sharing the longest opening with it, else an empty one, else the least recently used.
    pub(super) fn choose_slot(&self, conversation: Option<ConversationId>, tokens: &[LlamaToken]) -> usize {
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
    pub(super) fn park_idle_conversations_but(&mut self, keep: usize) {
        for slot in 0..self.slots.len() {
            let Slot { busy, owner, cached, .. } = &self.slots[slot];
            if slot != keep && !busy && owner.is_some() && !cached.is_empty() {
                self.park(slot);
            }
        }
    }

    /// Whether `slot` can take `tokens` and a reply of up to `max_tokens` (at most a quarter of
    /// the context), emptying other idle slots if need be.
    pub(super) fn room_for(&mut self, slot: usize, tokens: &[LlamaToken], max_tokens: u32) -> bool {
        let reserve = (max_tokens as usize).min(self.n_ctx() / 4);
        let cached = &self.slots[slot].cached;
        let kept = shared_prefix(cached, tokens);
        // The slot's own tokens past the shared opening are dropped when it starts.
        let need = (tokens.len() - kept + reserve).saturating_sub(cached.len() - kept);
        self.make_room(slot, need)
    }

    /// Empties idle slots other than `keep`, least recently used first, until `need` cells are
    /// free. False if the replies running leave too little.
    pub(super) fn make_room(&mut self, keep: usize, need: usize) -> bool {
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
    pub(super) fn park(&mut self, slot: usize) {
        if let Some(owner) = self.slots[slot].owner.take()
            && let Some(state) = self.snapshot(slot)
            && let Some(memory) = self.memory.as_mut()
        {
            memory.park(owner, state);
        }
        self.clear_slot(slot);
    }

    pub(super) fn clear_slot(&mut self, slot: usize) {
        let _ = self.context.clear_kv_cache_seq(Some(self.slots[slot].seq as u32), None, None);
        self.slots[slot].empty();
    }

    /// Makes `slot` the cache of `conversation`: the one in place goes to memory for its own
    /// conversation, and `conversation`'s own comes back if it shares more with `prompt` than
    /// what is in place. Says where the cache now comes from.
    pub(super) fn switch_to(&mut self, slot: usize, conversation: Option<ConversationId>, prompt: &[LlamaToken]) -> PromptSource {
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
    pub(super) fn snapshot(&self, slot: usize) -> Option<SavedState> {
        let Slot { seq, cached, checkpoints, .. } = &self.slots[slot];
        if cached.is_empty() {
            return None;
        }
        let data = self.seq_state(*seq, LlamaStateSeqFlags::empty())?;
        Some(SavedState { tokens: cached.iter().map(|t| t.0).collect(), data, checkpoints: checkpoints.list().to_vec() })
    }

    /// A sequence's state as bytes (`PARTIAL_ONLY`: the part that cannot be cut back); `None`
    /// when llama.cpp wrote other than it said.
    pub(super) fn seq_state(&self, seq: i32, flags: LlamaStateSeqFlags) -> Option<Vec<u8>> {
        let size = self.context.state_seq_get_size_ext(seq, flags);
        let mut data = vec![0u8; size];
        // SAFETY: `data` holds exactly the size llama.cpp just reported for this sequence.
        let written = unsafe { self.context.state_seq_get_data_ext(data.as_mut_ptr(), seq, flags) };
        (written == size).then_some(data)
    }

    /// Whether `slot`'s prompt reading has reached its next mark.
    pub(super) fn checkpoint_due(&self, slot: usize) -> bool {
        let slot = &self.slots[slot];
        slot.marks.first() == Some(&slot.cached.len())
    }

    /// Saves the part of `slot`'s state that cannot be cut back, to come back to this point.
    pub(super) fn take_checkpoint(&mut self, slot: usize) {
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
    pub(super) fn set_marks(&mut self, slot: usize, messages: &[ChatMessage], continue_last: bool, tokens: &[LlamaToken]) {
        let wanted = self.reuse_kv && self.cut_back.needs_checkpoints();
        let start = if wanted { self.message_start(messages, continue_last, tokens) } else { None };
        let from = self.slots[slot].cached.len();
        let slot = &mut self.slots[slot];
        slot.marks = if wanted { checkpoints::marks(tokens.len(), from, start) } else { Vec::new() };
        slot.message_mark = start;
    }

    /// The token where the user's last message starts in `tokens`, when a token starts there
    /// (counted from the end: the text before it may be spelled as the cache spells it).
    pub(super) fn message_start(&self, messages: &[ChatMessage], continue_last: bool, tokens: &[LlamaToken]) -> Option<usize> {
        let tail = self.own_tail(messages, continue_last);
        if tail == 0 || tail == usize::MAX {
            return None;
        }
        let vocab = self.model.vocab();
        let mut bytes = 0;
        for (at, &token) in tokens.iter().enumerate().rev() {
            bytes += crate::vision::piece(&vocab, token).len();
            if bytes >= tail {
                return (bytes == tail).then_some(at);
            }
        }
        None
    }

    /// Replaces a slot's cache with a saved one; on failure the slot is left empty.
    pub(super) fn restore(&mut self, slot: usize, data: &[u8], tokens: Vec<LlamaToken>, checkpoints: Vec<Checkpoint>) -> bool {
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

    /// The prompt for `messages` spelled as `slot`'s cache spells the text they share (see
    /// [`prefix`]) before the user's last message, which is read in its own tokens: a typed
    /// message is read as the same message pasted.
    pub(super) fn follow_cache(
        &self,
        slot: usize,
        messages: &[ChatMessage],
        continue_last: bool,
        tokens: Vec<LlamaToken>,
    ) -> Vec<LlamaToken> {
        let cached = &self.slots[slot].cached;
        let same = shared_prefix(cached, &tokens);
        if same == cached.len() || same == tokens.len() {
            return tokens; // Nothing spelled otherwise.
        }
        if cached.iter().chain(&tokens).any(|&t| crate::vision::is_image(t)) {
            return tokens; // An image has no spelling: the text around it is read as it is.
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
    pub(super) fn own_tail(&self, messages: &[ChatMessage], continue_last: bool) -> usize {
        match messages.last() {
            Some(last) if last.role == Role::User && !continue_last && !last.content.is_empty() => self
                // (Thinking or not changes only what follows the assistant's turn's opening.)
                .render(std::slice::from_ref(last), PromptAsk::plain())
                .ok()
                .and_then(|prompt| prompt.text.rfind(&last.content).map(|at| prompt.text.len() - at))
                .unwrap_or(usize::MAX),
            _ => 0,
        }
    }

    /// How many of the last `tokens` of `prompt` write what an unfinished `message` may yet
    /// change (see [`prefix::unsettled_bytes`]).
    pub(super) fn unsettled_tokens(&self, prompt: &str, message: &str, tokens: &[LlamaToken]) -> usize {
        let vocab = self.model.vocab();
        prefix::tokens_writing_tail(tokens, prefix::unsettled_bytes(prompt, message), |token| crate::vision::piece(&vocab, token))
    }

    /// Keeps the longest prefix of `tokens` cached in `slot` and drops the rest of it; returns
    /// its length. At least one token is left to decode, since sampling needs fresh logits —
    /// none when `whole` allows it and the slot holds exactly `tokens` with the logits after
    /// them (see [`Slot::tail_logits`]).
    pub(super) fn reuse_prefix(&mut self, slot: usize, tokens: &[LlamaToken], whole: bool) -> usize {
        let held = &self.slots[slot];
        let cached = &held.cached;
        let mut keep = if self.reuse_kv { shared_prefix(cached, tokens) } else { 0 };
        let whole = whole && keep == tokens.len() && cached.len() == tokens.len() && held.tail_logits().is_some();
        if !whole {
            keep = keep.min(tokens.len().saturating_sub(1));
        }
        if keep < cached.len() {
            keep = self.cut_back(slot, keep);
        }
        keep
    }

    /// Cuts `slot`'s cache back to its first `keep` tokens where the model's cache allows it,
    /// else to its latest checkpoint before them, else to nothing (said in the log: the whole
    /// prompt is read again). Returns the tokens kept.
    pub(super) fn cut_back(&mut self, slot: usize, keep: usize) -> usize {
        let seq = self.slots[slot].seq;
        // An image read in two dimensions is cut whole: its cells share one position.
        let keep = vision::cut_point(&self.slots[slot].cached, keep);
        let at = self.slots[slot].position(keep);
        let free = match self.cut_back {
            CutBack::Free => true,
            // The window before the cut must still be cached: the token at `keep` attends to the
            // positions after `keep - n_swa`.
            CutBack::Window(n_swa) => {
                usize::try_from(self.context.kv_cache_seq_pos_min(seq)).is_ok_and(|min| min <= (at as usize + 1).saturating_sub(n_swa))
            }
            CutBack::Never => keep == 0,
        };
        if free && self.context.kv_cache_seq_rm(seq, Some(at), None).is_ok() {
            self.slots[slot].cut(keep);
            return keep;
        }
        let back_to = self.slots[slot].checkpoints.at_or_before(keep).and_then(|checkpoint| {
            // SAFETY: these bytes came from `take_checkpoint` on this context, or from a state
            // file whose key and checksum `kv_memory::decode` verified.
            let set = unsafe { self.context.state_seq_set_data_ext(&checkpoint.data, seq, LlamaStateSeqFlags::PARTIAL_ONLY) };
            let from = vision::position(&self.slots[slot].cached, checkpoint.at) as u32;
            (set && self.context.kv_cache_seq_rm(seq, Some(from), None).is_ok()).then_some(checkpoint.at)
        });
        match back_to {
            Some(at) => {
                tracing::debug!(shared = keep, checkpoint = at, read_again = keep - at, "cache cut back to a checkpoint");
                self.slots[slot].cut(at);
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
    pub(super) fn borrow_prefix(&mut self, slot: usize, tokens: &[LlamaToken], kept: usize) -> usize {
        // A sliding window's cells are not all kept (a restored state holds only its window).
        if !self.reuse_kv || self.cut_back.needs_checkpoints() {
            return kept;
        }
        let limit = tokens.len().saturating_sub(1); // The last token is decoded for its logits.
        let donor = (0..self.slots.len())
            .filter(|&i| i != slot)
            .map(|i| (i, vision::cut_point(&self.slots[i].cached, shared_prefix(&self.slots[i].cached, tokens).min(limit))))
            .max_by_key(|&(_, shared)| shared)
            .filter(|&(_, shared)| shared > kept);
        let Some((donor, shared)) = donor else { return kept };
        self.clear_slot(slot);
        let (from, to) = (self.slots[donor].seq, self.slots[slot].seq);
        if self.context.copy_kv_cache_seq(from, to, None, Some(self.slots[donor].position(shared))).is_err() {
            return 0;
        }
        self.slots[slot].cached = self.slots[donor].cached[..shared].to_vec();
        shared
    }

    /// Decodes `tokens` at `slot`'s next positions, alone in the batch, keeping the logits after
    /// the last of them with the slot when `keep_logits` says so.
    pub(super) fn decode_alone(&mut self, slot: usize, tokens: &[LlamaToken], keep_logits: bool) -> Result<(), BackendError> {
        self.batch.clear();
        let (seq, first) = (self.slots[slot].seq, self.slots[slot].next_pos());
        for (i, &token) in tokens.iter().enumerate() {
            let logits = keep_logits && i + 1 == tokens.len();
            self.batch.add(token, (first + i) as i32, &[seq], logits).map_err(|e| BackendError::Engine(e.to_string()))?;
        }
        match self.context.decode(&mut self.batch) {
            Ok(()) => {
                self.slots[slot].extend(tokens);
                if keep_logits && !tokens.is_empty() {
                    self.slots[slot].tail_logits = Some(self.context.get_logits_ith(self.batch.n_tokens() - 1).to_vec());
                }
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
    pub(super) fn holds_exactly(&self, slot: usize) -> bool {
        let slot = &self.slots[slot];
        i64::from(self.context.kv_cache_seq_pos_max(slot.seq)) == slot.last_cell_pos()
    }

    /// Makes `slot` hold as much of `tokens` as any cache has (its conversation's, another
    /// slot's opening); returns the tokens left to read, the reply's first stats and — when
    /// `whole` allows it and all of them are cached with the logits after them — those logits.
    pub(super) fn take_prompt(
        &mut self,
        slot: usize,
        request: &ReplyRequest,
        tokens: Vec<LlamaToken>,
        facts: PromptFacts,
        whole: bool,
    ) -> (Vec<LlamaToken>, ReplyStats, Option<Vec<f32>>) {
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
        let kept = self.reuse_prefix(slot, &tokens, whole);
        let cached_tokens = self.borrow_prefix(slot, &tokens, kept);
        let saved_logits = if cached_tokens == tokens.len() { self.slots[slot].tail_logits.take() } else { None };
        self.set_marks(slot, &request.messages, request.continue_last, &tokens);
        let stats = ReplyStats {
            prompt_tokens: tokens.len() as u32,
            cached_tokens: cached_tokens as u32,
            prompt_source: if cached_tokens == 0 { PromptSource::New } else { source },
            dropped_messages: facts.dropped as u32,
            template_notice: facts.notice,
            question_tokens: facts.question_tokens,
            document_tokens: facts.document_tokens,
            ..ReplyStats::default()
        };
        (tokens[cached_tokens..].to_vec(), stats, saved_logits)
    }
}
