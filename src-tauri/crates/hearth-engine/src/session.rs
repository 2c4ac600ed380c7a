//! One model's chat session: renders, tokenizes, reuses the KV cache and generates a reply.

use std::time::{Duration, Instant};

use encoding_rs::{Decoder, UTF_8};
use llama_cpp_2::LlamaStateSeqFlags;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc::UnboundedSender;

use hearth_core::{
    BackendError, CacheBudgets, CancelFlag, ChatMessage, FinishReason, GenEvent, MAX_TOP_LOGPROBS, OverflowPolicy, PromptSource,
    ReplyRequest, ReplyStats, Role, TokenChoice, TokenLogprob, fit_context,
};

use crate::LoadParams;
use crate::kv_memory::{ConversationId, KvMemory, SavedState};
use crate::prefix;
use crate::sampler;
use crate::stop::StopFilter;
use crate::template::ChatTemplate;

/// KV cache sequence used for the conversation.
const SEQ: i32 = 0;

pub struct Session<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    renderer: Renderer,
    /// Tokens whose keys and values are in the KV cache for `SEQ`, in position order. A sampled
    /// token that was never decoded (end of turn, length limit, stop) is not in it.
    cached: Vec<LlamaToken>,
    batch: LlamaBatch<'static>,
    n_batch: usize,
    reuse_kv: bool,
    /// The conversation whose cache `cached` is (`None`: a one-off prompt, or none yet).
    owner: Option<ConversationId>,
    /// The other conversations' caches; `None` keeps only the live one (asides, reuse off).
    memory: Option<KvMemory>,
    /// The conversation whose draft was read ahead into the cache since its last reply.
    typed: Option<ConversationId>,
}

enum Renderer {
    Jinja(Box<ChatTemplate>, LlamaChatTemplate),
    Builtin(LlamaChatTemplate),
}

impl<'m> Session<'m> {
    pub fn new(model: &'m LlamaModel, context: LlamaContext<'m>, params: &LoadParams, memory: Option<KvMemory>) -> Self {
        let n_batch = params.n_batch as usize;
        Session {
            model,
            context,
            renderer: renderer_for(model, params.chat_template.as_deref()),
            cached: Vec::new(),
            batch: LlamaBatch::new(n_batch, 1),
            n_batch,
            reuse_kv: params.reuse_kv,
            owner: None,
            memory: memory.filter(|_| params.reuse_kv),
            typed: None,
        }
    }

    /// Prefills a draft the user is still typing as if it were sent now (the conversation, the
    /// draft and the opening of the reply), chunk by chunk, stopping as soon as `preempted`
    /// says another request waits. The cache keeps what was read: when the user types on, only
    /// the tokens from where the text changed are dropped (a few, at the end), so at Enter little
    /// or nothing is left to read.
    pub fn prefill_draft(&mut self, request: &ReplyRequest, preempted: impl Fn() -> bool) {
        let Some(last) = request.messages.last() else { return };
        if !self.reuse_kv || last.role != Role::User || last.content.trim().is_empty() || preempted() {
            return;
        }
        let Ok(prompt) = self.prompt(&request.messages, false) else { return };
        let tokens = self.tokenize(&prompt);
        let n_ctx = self.context.n_ctx() as usize;
        if tokens.is_empty() || tokens.len() + (request.sampling.max_tokens as usize).min(n_ctx / 4) > n_ctx {
            return;
        }
        self.switch_to(request.conversation, &tokens);
        let tokens = self.follow_cache(tokens);
        self.reuse_prefix(&tokens);
        let suffix = tokens[self.cached.len()..].to_vec();
        for chunk in suffix.chunks(self.n_batch) {
            if preempted() || self.decode(chunk, false).is_err() {
                break;
            }
        }
        self.typed = request.conversation;
    }

    /// Keeps every conversation's cache on disk: the model is unloaded or the engine quits.
    pub fn retire(mut self) {
        let Some(mut memory) = self.memory.take() else { return };
        if let Some(owner) = self.owner
            && let Some(state) = self.snapshot()
        {
            memory.park(owner, state);
        }
        memory.spill_all();
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
        if conversation.is_none() || self.owner == conversation {
            self.owner = None;
        }
        if let Some(memory) = self.memory.as_mut() {
            memory.forget(conversation);
        }
    }

    /// Generates a reply, sending its events; always ends with `Finished` or `Failed`.
    pub fn reply(&mut self, request: ReplyRequest, events: &UnboundedSender<GenEvent>) {
        let last = match self.generate(&request, events) {
            Ok((reason, stats)) => GenEvent::Finished { reason, stats },
            Err(error) => GenEvent::Failed(error),
        };
        let _ = events.send(last);
    }

    fn generate(&mut self, request: &ReplyRequest, events: &UnboundedSender<GenEvent>) -> Result<(FinishReason, ReplyStats), BackendError> {
        let started = Instant::now();
        let n_ctx = self.context.n_ctx() as usize;
        let (tokens, dropped) = self.fit_prompt(request, n_ctx)?;
        let source = match self.switch_to(request.conversation, &tokens) {
            PromptSource::Live if request.conversation.is_some() && self.typed == request.conversation => PromptSource::Typed,
            source => source,
        };
        self.typed = None;
        let tokens = if self.reuse_kv { self.follow_cache(tokens) } else { tokens };
        let cached_tokens = self.reuse_prefix(&tokens) as u32;
        let mut stats = ReplyStats {
            prompt_tokens: tokens.len() as u32,
            cached_tokens,
            prompt_source: if cached_tokens == 0 { PromptSource::New } else { source },
            dropped_messages: dropped as u32,
            ..ReplyStats::default()
        };
        let suffix = tokens[self.cached.len()..].to_vec();
        if !self.prefill(&suffix, &request.cancel)? {
            return Ok((FinishReason::Cancelled, stats));
        }

        let mut sampler = sampler::build(self.model, &request.sampling, n_ctx as u32)?;
        let mut text = Utf8Stream::new();
        let mut stops = StopFilter::new(&request.sampling.stop);
        let mut outbox = Outbox::new();
        let mut first_token_at = None;
        let vocab = self.model.vocab();
        let reason = loop {
            // `sample` also accepts the token into the sampler state; never `accept` again.
            // `sample` already accepts the token into the chain: no `accept` after it.
            let token = sampler.sample(&self.context, self.batch.n_tokens() - 1);
            first_token_at.get_or_insert_with(Instant::now);
            if vocab.is_eog(token) {
                break FinishReason::EndOfTurn;
            }
            if let Some(top) = request.logprobs {
                outbox.logprob(self.logprob(token, top));
            }
            stats.completion_tokens += 1;
            let released = stops.push(&text.push(&vocab.token_to_piece(token, false, None)));
            if !outbox.push(&released.text, events) {
                break FinishReason::Cancelled; // Nobody is listening any more.
            }
            if released.stopped {
                break FinishReason::StopString;
            }
            if stats.completion_tokens >= request.sampling.max_tokens || self.cached.len() + 1 >= n_ctx {
                break FinishReason::Length;
            }
            if request.cancel.is_cancelled() {
                break FinishReason::Cancelled;
            }
            self.decode(&[token], true)?;
        };
        let tail = match reason {
            FinishReason::StopString => String::new(),
            _ => {
                let flushed = stops.push(&text.finish()).text;
                flushed + &stops.finish()
            }
        };
        outbox.push(&tail, events);
        outbox.flush(events);
        if let Some(first) = first_token_at {
            stats.ttft_ms = millis(first - started);
            let decoding = first.elapsed().as_secs_f64();
            if stats.completion_tokens > 1 && decoding > 0.0 {
                stats.decode_tps = f64::from(stats.completion_tokens - 1) / decoding;
            }
        }
        Ok((reason, stats))
    }

    /// Makes the cache `conversation`'s: the one in place is kept in memory for its own
    /// conversation, and `conversation`'s own comes back if it shares more with `prompt` than
    /// what is in place. Says where the cache now comes from.
    fn switch_to(&mut self, conversation: Option<ConversationId>, prompt: &[LlamaToken]) -> PromptSource {
        if conversation == self.owner {
            return PromptSource::Live;
        }
        let previous = std::mem::replace(&mut self.owner, conversation);
        let Some(mut memory) = self.memory.take() else { return PromptSource::New };
        if let Some(previous) = previous
            && let Some(state) = self.snapshot()
        {
            memory.park(previous, state);
        }
        let mut source = PromptSource::New;
        if let Some((saved, from)) = conversation.and_then(|c| memory.take(c)) {
            let shared = |tokens: &[LlamaToken]| tokens.iter().zip(prompt).take_while(|(a, b)| a == b).count();
            let saved_tokens: Vec<LlamaToken> = saved.tokens.iter().map(|&t| LlamaToken(t)).collect();
            if shared(&saved_tokens) > shared(&self.cached) && self.restore(&saved.data, saved_tokens) {
                source = from;
            }
        }
        self.memory = Some(memory);
        source
    }

    /// The live sequence's cache as bytes, with its tokens; `None` when empty or llama.cpp
    /// wrote other than it said.
    fn snapshot(&self) -> Option<SavedState> {
        if self.cached.is_empty() {
            return None;
        }
        let flags = LlamaStateSeqFlags::empty();
        let size = self.context.state_seq_get_size_ext(SEQ, flags);
        let mut data = vec![0u8; size];
        // SAFETY: `data` holds exactly the size llama.cpp just reported for this sequence.
        let written = unsafe { self.context.state_seq_get_data_ext(data.as_mut_ptr(), SEQ, flags) };
        (written == size).then(|| SavedState { tokens: self.cached.iter().map(|t| t.0).collect(), data })
    }

    /// Replaces the live sequence with a saved one; on failure the sequence is left empty.
    fn restore(&mut self, data: &[u8], tokens: Vec<LlamaToken>) -> bool {
        let _ = self.context.clear_kv_cache_seq(Some(SEQ as u32), None, None);
        self.cached.clear();
        // SAFETY: these bytes came from `snapshot` on this model and cache layout: straight from
        // RAM, or from a state file whose key and checksum `kv_memory::decode` verified.
        let restored = unsafe { self.context.state_seq_set_data_ext(data, SEQ, LlamaStateSeqFlags::empty()) };
        if restored {
            self.cached = tokens;
        } else {
            tracing::warn!("llama.cpp refused a saved KV state; the prompt is prefilled");
            let _ = self.context.clear_kv_cache_seq(Some(SEQ as u32), None, None);
        }
        restored
    }

    /// The prompt's tokens, after leaving out earlier messages as the overflow policy allows so
    /// that a reply has room (up to `max_tokens`, at most a quarter of the context).
    fn fit_prompt(&self, request: &ReplyRequest, n_ctx: usize) -> Result<(Vec<LlamaToken>, usize), BackendError> {
        let reserve = (request.sampling.max_tokens as usize).min(n_ctx / 4);
        let overflow = |tokens: usize| BackendError::ContextOverflow { tokens, n_ctx: n_ctx as u32 };
        if let Some(raw) = &request.raw_prompt {
            // Plain text has no turns to leave out: it fits, or it is refused.
            let tokens = self.tokenize(raw);
            return match tokens.len() {
                0 => Err(BackendError::InvalidRequest("the prompt is empty".into())),
                n if n + reserve <= n_ctx || (request.sampling.overflow == OverflowPolicy::StopAtLimit && n < n_ctx) => Ok((tokens, 0)),
                n => Err(overflow(n)),
            };
        }
        let tokens = self.tokenize(&self.prompt(&request.messages, request.continue_last)?);
        if tokens.len() + reserve <= n_ctx {
            return Ok((tokens, 0));
        }
        if request.sampling.overflow == OverflowPolicy::StopAtLimit {
            // The prompt fits; the reply stops when the context is full.
            return if tokens.len() < n_ctx { Ok((tokens, 0)) } else { Err(overflow(tokens.len())) };
        }
        let mut fitted = None;
        let kept = fit_context(&request.messages, request.sampling.overflow, |messages| {
            let Ok(prompt) = self.prompt(messages, request.continue_last) else { return false };
            let candidate = self.tokenize(&prompt);
            let fits = candidate.len() + reserve <= n_ctx;
            if fits {
                fitted = Some(candidate);
            }
            fits
        });
        match (kept, fitted) {
            (Some((_, dropped)), Some(tokens)) => Ok((tokens, dropped)),
            _ => Err(overflow(tokens.len())),
        }
    }

    /// The prompt for `messages`; when continuing, the unfinished reply is written after the
    /// assistant's turn opens, so the model carries on from its last word.
    fn prompt(&self, messages: &[ChatMessage], continue_last: bool) -> Result<String, BackendError> {
        match messages.split_last() {
            Some((last, before)) if continue_last && last.role == Role::Assistant => Ok(self.render(before)? + &last.content),
            _ => self.render(messages),
        }
    }

    fn render(&self, messages: &[ChatMessage]) -> Result<String, BackendError> {
        let mut jinja_error = None;
        if let Renderer::Jinja(jinja, _) = &self.renderer {
            match jinja.render(messages) {
                Ok(prompt) => return Ok(prompt),
                Err(e) => {
                    tracing::warn!(error = %e, "Jinja chat template failed; using llama.cpp's");
                    jinja_error = Some(e);
                }
            }
        }
        let builtin = match &self.renderer {
            Renderer::Jinja(_, builtin) | Renderer::Builtin(builtin) => builtin,
        };
        let chat = messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.as_str().into(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| BackendError::Engine(format!("a message cannot be sent to the model: {e}")))?;
        let prompt = self.model.apply_chat_template(builtin, &chat, true).map_err(|e| match jinja_error {
            // Ours says more than llama.cpp's "unsupported template".
            Some(jinja) => BackendError::Engine(jinja.to_string()),
            None => BackendError::Engine(format!("the chat template failed: {e}")),
        })?;
        if prompt.trim().is_empty() {
            return Err(BackendError::Engine(
                "the chat template rendered an empty prompt; choose another template in the Model settings".into(),
            ));
        }
        Ok(prompt)
    }

    fn tokenize(&self, prompt: &str) -> Vec<LlamaToken> {
        let vocab = self.model.vocab();
        // Templates usually write the BOS token themselves; adding another would shift the model.
        let bos = special_text(self.model, vocab.bos());
        let add_bos = vocab.should_add_bos() && (bos.is_empty() || !prompt.starts_with(&bos));
        vocab.tokenize(prompt.as_bytes(), add_bos, true)
    }

    /// The prompt spelled as the cache spells the text they share (see [`prefix`]).
    fn follow_cache(&self, tokens: Vec<LlamaToken>) -> Vec<LlamaToken> {
        let vocab = self.model.vocab();
        prefix::follow_cache(
            &self.cached,
            tokens,
            |token| vocab.token_to_piece(token, true, None),
            |text| vocab.tokenize(text, false, true),
        )
    }

    /// `token`'s log-probability at the position just decoded and the `top` likeliest there:
    /// the log-softmax of the raw logits, before any sampler (what OpenAI's `logprobs` report).
    fn logprob(&self, token: LlamaToken, top: u32) -> TokenLogprob {
        let logits = self.context.get_logits_ith(self.batch.n_tokens() - 1);
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let log_sum = max + logits.iter().map(|&l| (l - max).exp()).sum::<f32>().ln();
        let choice = |id: i32| TokenChoice {
            id,
            bytes: self.model.vocab().token_to_piece(LlamaToken(id), true, None),
            logprob: logits.get(id as usize).map_or(f32::NEG_INFINITY, |&l| l - log_sum),
        };
        let mut ids: Vec<i32> = (0..logits.len() as i32).collect();
        let by_logit = |a: &i32, b: &i32| logits[*b as usize].total_cmp(&logits[*a as usize]);
        let top = (top.min(MAX_TOP_LOGPROBS) as usize).min(ids.len());
        if top > 0 && top < ids.len() {
            ids.select_nth_unstable_by(top - 1, by_logit);
        }
        ids.truncate(top);
        ids.sort_by(by_logit);
        TokenLogprob { token: choice(token.0), top: ids.into_iter().map(choice).collect() }
    }

    /// Keeps the longest cached prefix of `tokens` and drops the rest of the cache; returns its
    /// length. At least one token is always left to decode, since sampling needs fresh logits.
    fn reuse_prefix(&mut self, tokens: &[LlamaToken]) -> usize {
        let mut keep = if self.reuse_kv { self.cached.iter().zip(tokens).take_while(|(a, b)| a == b).count() } else { 0 };
        keep = keep.min(tokens.len().saturating_sub(1));
        if keep < self.cached.len() {
            if self.context.kv_cache_seq_rm(SEQ, Some(keep as u32), None).is_err() {
                // Recurrent and hybrid models cannot drop a suffix; start over.
                self.context.clear_kv_cache();
                keep = 0;
            }
            self.cached.truncate(keep);
        }
        keep
    }

    /// Decodes `tokens` in chunks of the batch size. Returns false if cancelled between chunks.
    fn prefill(&mut self, tokens: &[LlamaToken], cancel: &CancelFlag) -> Result<bool, BackendError> {
        let chunks = tokens.chunks(self.n_batch);
        let last = chunks.len().saturating_sub(1);
        for (i, chunk) in tokens.chunks(self.n_batch).enumerate() {
            if cancel.is_cancelled() {
                return Ok(false);
            }
            self.decode(chunk, i == last)?;
        }
        Ok(true)
    }

    /// Decodes `tokens` at the next positions, asking for logits of the last one if `logits`.
    fn decode(&mut self, tokens: &[LlamaToken], logits: bool) -> Result<(), BackendError> {
        self.batch.clear();
        let start = self.cached.len();
        for (i, &token) in tokens.iter().enumerate() {
            let want_logits = logits && i + 1 == tokens.len();
            self.batch.add(token, (start + i) as i32, &[SEQ], want_logits).map_err(|e| BackendError::Engine(e.to_string()))?;
        }
        if let Err(e) = self.context.decode(&mut self.batch) {
            // The cache may now hold part of the batch; forget it all rather than guess.
            self.context.clear_kv_cache();
            self.cached.clear();
            return Err(BackendError::Engine(format!("decoding failed: {e}")));
        }
        self.cached.extend_from_slice(tokens);
        Ok(())
    }
}

/// The user's template if given, else the model's own; llama.cpp's renderer of the model's
/// template (or ChatML) as the fallback.
fn renderer_for(model: &LlamaModel, custom: Option<&str>) -> Renderer {
    let fallback = || LlamaChatTemplate::new("chatml").expect("static name has no NUL");
    let builtin = model.chat_template(None).ok();
    let source = match (custom, &builtin) {
        (Some(custom), _) => custom.to_owned(),
        (None, Some(own)) => own.to_string().unwrap_or_default(),
        (None, None) => {
            tracing::info!("model has no chat template; using ChatML");
            return Renderer::Builtin(fallback());
        }
    };
    let builtin = builtin.unwrap_or_else(fallback);
    let vocab = model.vocab();
    let bos = special_text(model, vocab.bos());
    let eos = special_text(model, vocab.eos());
    match ChatTemplate::new(&source, &bos, &eos) {
        Ok(jinja) => Renderer::Jinja(Box::new(jinja), builtin),
        Err(e) => {
            tracing::warn!(error = %e, "chat template does not compile; using llama.cpp's renderer");
            Renderer::Builtin(builtin)
        }
    }
}

fn special_text(model: &LlamaModel, token: LlamaToken) -> String {
    if token.0 < 0 {
        return String::new();
    }
    String::from_utf8_lossy(&model.vocab().token_to_piece(token, true, None)).into_owned()
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Collects reply text and sends it at most every `DELTA_INTERVAL` (the first piece at once).
/// Waking the receiver for every token costs real decode speed when llama.cpp's threads fill
/// every core; a window repaints at most once a frame anyway.
struct Outbox {
    pending: String,
    /// The pending text's tokens' log-probabilities, when the request asked for them.
    logprobs: Vec<TokenLogprob>,
    last_sent: Option<Instant>,
}

/// Often enough for any reader (ChatService paces the window further, to
/// `hearth_core::WINDOW_UPDATE_INTERVAL`). Kept at 40 ms: the engine tests that stop a reply after
/// its second delta compare greedy text at the stop point this gives.
const DELTA_INTERVAL: Duration = Duration::from_millis(40);

impl Outbox {
    fn new() -> Self {
        Outbox { pending: String::new(), logprobs: Vec::new(), last_sent: None }
    }

    /// Queues a token's log-probabilities; they go just before the text they belong to.
    fn logprob(&mut self, logprob: TokenLogprob) {
        self.logprobs.push(logprob);
    }

    /// Queues `text`, sending if due. Returns false if the receiver is gone.
    fn push(&mut self, text: &str, events: &UnboundedSender<GenEvent>) -> bool {
        self.pending.push_str(text);
        let due = self.last_sent.is_none_or(|t| t.elapsed() >= DELTA_INTERVAL);
        !due || self.flush(events)
    }

    fn flush(&mut self, events: &UnboundedSender<GenEvent>) -> bool {
        if !self.logprobs.is_empty() && events.send(GenEvent::Logprobs(std::mem::take(&mut self.logprobs))).is_err() {
            return false;
        }
        if self.pending.is_empty() {
            return !events.is_closed();
        }
        self.last_sent = Some(Instant::now());
        events.send(GenEvent::Delta(std::mem::take(&mut self.pending))).is_ok()
    }
}

/// Turns token bytes into text without ever splitting a multi-byte character.
struct Utf8Stream {
    decoder: Decoder,
}

impl Utf8Stream {
    fn new() -> Self {
        Utf8Stream { decoder: UTF_8.new_decoder_without_bom_handling() }
    }

    fn push(&mut self, bytes: &[u8]) -> String {
        self.decode(bytes, false)
    }

    /// Flushes bytes held back at the end (an incomplete character becomes U+FFFD).
    fn finish(&mut self) -> String {
        self.decode(&[], true)
    }

    fn decode(&mut self, bytes: &[u8], last: bool) -> String {
        let capacity = self.decoder.max_utf8_buffer_length(bytes.len()).unwrap_or(bytes.len() + 4);
        let mut out = String::with_capacity(capacity);
        let _ = self.decoder.decode_to_string(bytes, &mut out, last);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Stream;

    #[test]
    fn utf8_stream_holds_split_characters() {
        let cases: &[(&[&[u8]], &[&str])] = &[
            (&[b"ab", b"c"], &["ab", "c", ""]),
            // "é" = C3 A9, "🔥" = F0 9F 94 A5 split over three pieces.
            (&[b"\xC3", b"\xA9x"], &["", "éx", ""]),
            (&[b"\xF0\x9F", b"\x94", b"\xA5!"], &["", "", "🔥!", ""]),
            (&[b"\xF0\x9F"], &["", "\u{FFFD}"]),
        ];
        for (pieces, expected) in cases {
            let mut s = Utf8Stream::new();
            let mut got: Vec<String> = pieces.iter().map(|p| s.push(p)).collect();
            got.push(s.finish());
            assert_eq!(got, *expected, "{pieces:?}");
        }
    }
}
