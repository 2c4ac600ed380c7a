//! A sampled reply (and a consensus candidate): one lane, the prompt tokens still to read, its
//! sampler chain, the drafts guessed ahead and checked beside its token, the text released so far
//! and its statistics. Which replies share a batch is the scheduler's business.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use encoding_rs::{Decoder as TextDecoder, UTF_8};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc::UnboundedSender;

use hearth_core::harmony::{self, HarmonyStream};
use hearth_core::{
    CallReader, CallShape, FinishReason, GenEvent, MAX_TOP_LOGPROBS, ReasoningCounter, ReplyRequest, ReplyStats, Speculative, THINK_CLOSE,
    THINK_CLOSING, THINK_OPEN, THINK_OPENED, TokenAlternative, TokenChoice, TokenLogprob, TokenProbs,
};
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use super::{AfterDecode, Decoder, Lane, Member, Room, Written};
use crate::drafter::Drafter;
use crate::lookup;
use crate::stop::StopFilter;

/// Where a reply's next logits are.
pub(crate) enum LogitsAt {
    /// At this position of the batch just decoded; its drafts' follow.
    Batch(i32),
    /// Kept from a read before the reply started (its whole prompt was cached with them).
    Saved(Vec<f32>),
}

pub(crate) struct Reply {
    /// Index of the slot (KV sequence) it writes in.
    slot: usize,
    pub request: ReplyRequest,
    pub events: UnboundedSender<GenEvent>,
    /// A consensus reply's candidate.
    pub member: Option<Member>,
    /// Prompt tokens not yet in the cache, read a chunk per step.
    pub prompt: Vec<LlamaToken>,
    /// The token sampled last: its keys and values are computed at the next step.
    pub next: Option<LlamaToken>,
    /// Tokens guessed to follow `next`, decoded beside it for the sampler to check.
    pub drafts: Vec<LlamaToken>,
    /// Where this reply's next logits are (`None`: it samples nothing this step).
    pub logits_at: Option<LogitsAt>,
    sampler: LlamaSampler,
    /// The candidates buffer the inspector's sampling reuses.
    candidates: Vec<LlamaTokenData>,
    text: Utf8Stream,
    stops: StopFilter,
    outbox: Outbox,
    /// A model that writes gpt-oss's channels: its text as Hearth stores replies.
    harmony: Option<HarmonyStream>,
    /// A model that writes its calls around their names (Llama 3.x's, Mistral's): its text as
    /// Hearth stores it.
    named_calls: Option<CallReader>,
    /// Control tokens written as their text: the markers of the model's calls (Mistral's
    /// `[TOOL_CALLS]`…), which llama.cpp writes as nothing, as llama.cpp's server preserves them.
    preserved: Vec<LlamaToken>,
    /// Tokens written as other text: a template's own reasoning markers (Command R7B's) as
    /// `<think>` and `</think>`, the reasoning as Hearth stores it.
    renamed: Vec<(LlamaToken, &'static str)>,
    /// What closes a reasoning block whose budget is spent, as the model writes it.
    think_closing: &'static str,
    /// The tokens of the reply's leading reasoning block (`stats.reasoning_tokens`).
    reasoning: ReasoningCounter,
    /// Tokens written in place of sampled ones: the closing of a reasoning block whose budget is
    /// spent (`sampling.reasoning_budget`).
    forced: VecDeque<LlamaToken>,
    /// The reasoning block was closed for its budget.
    budget_closed: bool,
    pub stats: ReplyStats,
    started: Instant,
    first_token_at: Option<Instant>,
}

impl Reply {
    pub fn new(
        slot: usize,
        request: ReplyRequest,
        events: UnboundedSender<GenEvent>,
        prompt: Vec<LlamaToken>,
        sampler: LlamaSampler,
        stats: ReplyStats,
        started: Instant,
    ) -> Self {
        let stops = StopFilter::new(&request.sampling.stop);
        Reply {
            slot,
            request,
            events,
            member: None,
            prompt,
            next: None,
            drafts: Vec::new(),
            logits_at: None,
            sampler,
            candidates: Vec::new(),
            text: Utf8Stream::new(),
            stops,
            outbox: Outbox::new(),
            harmony: None,
            named_calls: None,
            preserved: Vec::new(),
            renamed: Vec::new(),
            think_closing: THINK_CLOSING,
            reasoning: ReasoningCounter::default(),
            forced: VecDeque::new(),
            budget_closed: false,
            stats,
            started,
            first_token_at: None,
        }
    }

    /// Whether the reply is still reasoning with its budget spent. (Not under a grammar, a JSON
    /// schema or tools: their grammar decides every token, and a token it refuses would abort.)
    fn reasoning_budget_spent(&self) -> bool {
        let sampling = &self.request.sampling;
        let unconstrained = sampling.constraint.is_none() && self.request.tools.is_none();
        let budget = u32::try_from(sampling.reasoning_budget).ok();
        unconstrained
            && !self.budget_closed
            && self.reasoning.thinking()
            && budget.is_some_and(|budget| self.reasoning.tokens().unwrap_or(0) >= budget)
    }

    /// The prompt ends inside the reply's reasoning block: the chat template opened it after the
    /// assistant's turn (DeepSeek-R1's and some Qwen3 templates do). The reply's text opens it too,
    /// so it is stored, shown and answered as a reply that opened the block itself.
    pub fn open_reasoning(&mut self) {
        self.reasoning.opened_by_prompt();
        let opening = match &mut self.harmony {
            Some(channels) => channels.push(harmony::ANALYSIS_OPENING),
            None => THINK_OPENED.to_owned(),
        };
        self.outbox.push(&opening, &self.events);
    }

    /// The model writes gpt-oss's channels: its text is read into a leading reasoning block and
    /// the answer (a reply continued, from where its text left off).
    pub fn write_channels(&mut self) {
        let continued = self.request.messages.last().filter(|_| self.request.continue_last).map(|m| m.content.as_str());
        self.harmony = Some(HarmonyStream::continuing(continued));
    }

    /// The model writes its calls in `shape`: each is read into a call block (its markers that
    /// are control tokens written as their text).
    pub fn read_calls(&mut self, shape: CallShape, model: &LlamaModel) {
        self.named_calls = Some(shape.reader());
        let vocab = model.vocab();
        let tokens = shape.markers().into_iter().flat_map(|marker| vocab.tokenize(marker.as_bytes(), false, true));
        self.preserved = tokens.filter(|&token| vocab.is_control(token)).collect();
    }

    /// The model writes its reasoning between markers of its own, each a token: read as
    /// `<think>` and `</think>`, and closed with its own marker when its budget is spent.
    pub fn read_think_markers(&mut self, (open, close): (&'static str, &'static str), model: &LlamaModel) {
        let vocab = model.vocab();
        let token = |marker: &str| match vocab.tokenize(marker.as_bytes(), false, true)[..] {
            [token] => Some(token),
            _ => None,
        };
        if let (Some(opening), Some(closing)) = (token(open), token(close)) {
            self.renamed = vec![(opening, THINK_OPEN), (closing, THINK_CLOSE)];
            self.think_closing = close;
        }
    }

    /// Guesses up to `room` tokens to follow `cached` and `next` in sequence `seq` (nothing
    /// unless speculative decoding is on), never past the reply's length limit.
    fn guess(&mut self, cached: &[LlamaToken], seq: i32, room: usize, drafters: &mut [Drafter]) {
        let sampling = &self.request.sampling;
        let Some(next) = self.next.filter(|_| sampling.speculative != Speculative::Off) else { return };
        let left = sampling.max_tokens.saturating_sub(self.stats.completion_tokens + 1) as usize;
        let max = room.min(left).min(sampling.draft_max as usize);
        let mut history = Vec::with_capacity(cached.len() + 1);
        history.extend_from_slice(cached);
        history.push(next);
        self.drafts = match sampling.speculative {
            Speculative::Off => Vec::new(),
            Speculative::PromptLookup => lookup::draft(&history, max),
            Speculative::DraftModel => {
                let drafter = drafters.iter_mut().find(|d| sampling.draft_model.as_ref() == Some(&d.path));
                drafter.map_or_else(Vec::new, |d| d.draft(seq, &history, max))
            }
        };
    }

    /// Samples the position at `logits_at` and, while the token sampled is the draft decoded
    /// there, the next one: the sampler decides every token, so the reply is the same with or
    /// without drafts. Releases the text; the last token sampled waits in `next` to be decoded.
    fn sample(&mut self, context: &LlamaContext<'_>, model: &LlamaModel) -> AfterDecode {
        let Some(logits_at) = self.logits_at.take() else { return AfterDecode::default() };
        let at = match logits_at {
            LogitsAt::Batch(at) => at,
            LogitsAt::Saved(logits) => {
                let token = self.sample_from(&logits, model);
                let finish = self.emit(token, &logits, model);
                if finish.is_none() {
                    self.next = Some(token);
                }
                return AfterDecode { finish, ..AfterDecode::default() };
            }
        };
        let drafts = std::mem::take(&mut self.drafts);
        let mut accepted = 0;
        let finish = loop {
            let at = at + accepted as i32;
            let token = self.sample_at(context, model, at);
            if let Some(reason) = self.emit(token, context.get_logits_ith(at), model) {
                break Some(reason);
            }
            if drafts.get(accepted) != Some(&token) {
                self.next = Some(token);
                break None;
            }
            accepted += 1;
        };
        self.stats.drafted_tokens += drafts.len() as u32;
        self.stats.accepted_tokens += accepted as u32;
        AfterDecode { forks: Vec::new(), rejected: drafts.len() - accepted, finish }
    }

    /// Draws the token at batch position `at` through the sampler chain, noting the distribution
    /// it was drawn from when the request asked for it.
    fn sample_at(&mut self, context: &LlamaContext<'_>, model: &LlamaModel, at: i32) -> LlamaToken {
        if self.request.top_probs.is_none() {
            if let Some(token) = self.forced.pop_front() {
                self.sampler.accept(token);
                return token;
            }
            // `sample` also accepts the token into the sampler chain: never `accept` again.
            return self.sampler.sample(context, at);
        }
        self.sample_from(context.get_logits_ith(at), model)
    }

    /// What the sampler chain's `sample` does inside, from `logits` at hand, with the candidates
    /// left to read afterwards — in a buffer kept from token to token (a fresh one is 600 KB to
    /// map and fault in for every token).
    fn sample_from(&mut self, logits: &[f32], model: &LlamaModel) -> LlamaToken {
        let mut buffer = std::mem::take(&mut self.candidates);
        buffer.clear();
        buffer.extend(logits.iter().enumerate().map(|(id, &logit)| LlamaTokenData::new(LlamaToken(id as i32), logit, 0.0)));
        let mut candidates = LlamaTokenDataArray::new(buffer, false);
        candidates.apply_sampler(&mut self.sampler);
        let token = self.forced.pop_front().unwrap_or_else(|| candidates.selected_token().unwrap_or_else(|| greedy_pick(&candidates)));
        self.sampler.accept(token);
        if let Some(top) = self.request.top_probs {
            self.outbox.token_probs(drawn_from(&candidates, token, top as usize, model));
        }
        self.candidates = candidates.data;
        token
    }

    /// Releases a sampled token's text (`logits`: the raw ones it was drawn from); says why the
    /// reply ends if it does.
    fn emit(&mut self, token: LlamaToken, logits: &[f32], model: &LlamaModel) -> Option<FinishReason> {
        if self.first_token_at.is_none() {
            self.first_token_at = Some(Instant::now());
            tracing::debug!(since_asked_ms = self.started.elapsed().as_secs_f64() * 1000.0, "first token");
        }
        let vocab = model.vocab();
        if vocab.is_eog(token) {
            return Some(FinishReason::EndOfTurn);
        }
        if let Some(top) = self.request.logprobs {
            self.outbox.logprob(logprob(logits, model, token, top));
        }
        self.stats.completion_tokens += 1;
        let special = self.preserved.contains(&token);
        let piece = match self.renamed.iter().find(|(renamed, _)| *renamed == token) {
            Some((_, text)) => text.as_bytes().to_vec(),
            None => vocab.token_to_piece(token, special, None),
        };
        let released = self.stops.push(&self.text.push(&piece));
        let text = match &mut self.harmony {
            Some(channels) => channels.push(&released.text),
            None => released.text,
        };
        let text = match &mut self.named_calls {
            Some(calls) => calls.push(&text),
            None => text,
        };
        self.reasoning.token(&text);
        if self.reasoning_budget_spent() {
            // The block is closed as the model would close it, and it answers from there.
            self.budget_closed = true;
            let closing = if self.harmony.is_some() { harmony::ANALYSIS_TO_FINAL } else { self.think_closing };
            self.forced = vocab.tokenize(closing.as_bytes(), false, true).into();
        }
        if !self.outbox.push(&text, &self.events) {
            return Some(FinishReason::Cancelled); // Nobody is listening any more.
        }
        if released.stopped {
            return Some(FinishReason::StopString);
        }
        if self.stats.completion_tokens >= self.request.sampling.max_tokens {
            return Some(FinishReason::Length);
        }
        if self.request.cancel.is_cancelled() {
            return Some(FinishReason::Cancelled);
        }
        None
    }
}

impl Decoder for Reply {
    fn request(&self) -> &ReplyRequest {
        &self.request
    }

    fn events(&self) -> &UnboundedSender<GenEvent> {
        &self.events
    }

    fn lanes(&self) -> &[usize] {
        std::slice::from_ref(&self.slot)
    }

    fn member(&self) -> Option<Member> {
        self.member
    }

    fn prompt(&self) -> &[LlamaToken] {
        &self.prompt
    }

    fn take_prompt(&mut self, n: usize) -> Vec<LlamaToken> {
        self.prompt.drain(..n.min(self.prompt.len())).collect()
    }

    fn prompt_read(&mut self, at: i32) {
        self.logits_at = Some(LogitsAt::Batch(at));
    }

    fn writing(&self) -> usize {
        usize::from(self.next.is_some())
    }

    /// Its last sampled token, and the drafts the cache and the batch have room for once every
    /// writer after it has its token.
    fn write(&mut self, batch: &mut LlamaBatch, lanes: &[Lane<'_>], room: Room<'_>) -> Written {
        if self.next.is_none() {
            return Written::Tokens(Vec::new());
        }
        if room.cells <= 1 {
            return Written::Full; // The context is full.
        }
        let lane = &lanes[0];
        if let Some(drafters) = room.drafters {
            let draft_room = (room.cells - 2).min(room.batch.saturating_sub(1 + room.writers_after));
            self.guess(lane.cached, lane.seq, draft_room, drafters);
        }
        let Some(token) = self.next.take() else { return Written::Tokens(Vec::new()) };
        let first = lane.next_pos;
        let at = batch.n_tokens();
        let tokens: Vec<LlamaToken> = std::iter::once(token).chain(self.drafts.iter().copied()).collect();
        if !tokens.iter().enumerate().all(|(k, &t)| batch.add(t, first + k as i32, &[lane.seq], true).is_ok()) {
            return Written::Full;
        }
        self.logits_at = Some(LogitsAt::Batch(at));
        Written::Tokens(vec![(0, tokens)])
    }

    fn after_decode(&mut self, context: &LlamaContext<'_>, model: &LlamaModel) -> AfterDecode {
        self.sample(context, model)
    }

    fn finish(mut self: Box<Self>, reason: FinishReason, _model: &LlamaModel) {
        let mut tail = match reason {
            FinishReason::StopString => String::new(),
            _ => {
                let flushed = self.stops.push(&self.text.finish()).text;
                flushed + &self.stops.finish()
            }
        };
        if let Some(channels) = &mut self.harmony {
            tail = channels.push(&tail) + &channels.finish();
        }
        if let Some(calls) = &mut self.named_calls {
            tail = calls.push(&tail) + &calls.finish();
        }
        self.outbox.push(&tail, &self.events);
        self.outbox.flush(&self.events);
        self.stats.reasoning_tokens = self.reasoning.tokens();
        if let Some(first) = self.first_token_at {
            self.stats.ttft_ms = (first - self.started).as_secs_f64() * 1000.0;
            let decoding = first.elapsed().as_secs_f64();
            if self.stats.completion_tokens > 1 && decoding > 0.0 {
                self.stats.decode_tps = f64::from(self.stats.completion_tokens - 1) / decoding;
            }
        }
        let _ = self.events.send(GenEvent::Finished { reason, stats: self.stats });
    }
}

/// `token`'s log-probability in `logits` and the `top` likeliest there: the
/// log-softmax of the raw logits, before any sampler (what OpenAI's `logprobs` report).
fn logprob(logits: &[f32], model: &LlamaModel, token: LlamaToken, top: u32) -> TokenLogprob {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // Summed in f64: 49,152 terms in f32 lose about 1e-4 of the total.
    let log_sum = max + logits.iter().map(|&l| f64::from(l - max).exp()).sum::<f64>().ln() as f32;
    let choice = |id: i32| TokenChoice {
        id,
        bytes: model.vocab().token_to_piece(LlamaToken(id), true, None),
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

/// The token with the highest logit: what a chain that leaves no selection (none of Hearth's
/// do; a defensive fallback) would mean.
fn greedy_pick(candidates: &LlamaTokenDataArray) -> LlamaToken {
    candidates.data.iter().max_by(|a, b| a.logit().total_cmp(&b.logit())).map_or(LlamaToken(0), |d| d.id())
}

/// The distribution the chain left (the softmax of the surviving candidates' logits, as its
/// final pick draws from) as `token`'s probability, the entropy and the `top` likeliest. One
/// pass over the vocabulary: it runs for every token of every reply the window shows.
fn drawn_from(candidates: &LlamaTokenDataArray, token: LlamaToken, top: usize, model: &LlamaModel) -> TokenProbs {
    let max = candidates.data.iter().map(|d| d.logit()).fold(f32::NEG_INFINITY, f32::max);
    // Z = Σ e^(l - max) and Σ e^(l - max)·(l - max): H = ln Z - that ÷ Z (nats).
    let (mut z, mut weighted) = (0f64, 0f64);
    let mut best: Vec<(f32, LlamaToken)> = Vec::with_capacity(top + 1);
    let mut chosen_logit = f32::NEG_INFINITY;
    for d in candidates.data.iter().filter(|d| d.logit().is_finite()) {
        let x = d.logit() - max;
        let e = f64::from(x.exp());
        z += e;
        weighted += e * f64::from(x);
        if d.id() == token {
            chosen_logit = d.logit();
        }
        // The `top` likeliest so far, likeliest first (`top` is at most 20: a short insertion).
        if top > 0 && (best.len() < top || d.logit() > best[best.len() - 1].0) {
            let at = best.partition_point(|&(l, _)| l >= d.logit());
            best.insert(at, (d.logit(), d.id()));
            best.truncate(top);
        }
    }
    let p = |logit: f32| if z > 0.0 { (f64::from(logit - max).exp() / z) as f32 } else { 0.0 };
    let entropy = if z > 0.0 { (z.ln() - weighted / z) / std::f64::consts::LN_2 } else { 0.0 };
    let text = |t: LlamaToken| String::from_utf8_lossy(&model.vocab().token_to_piece(t, false, None)).into_owned();
    TokenProbs {
        id: token.0,
        text: text(token),
        p: p(chosen_logit),
        entropy: entropy.max(0.0) as f32,
        top: best.into_iter().map(|(l, t)| TokenAlternative { id: t.0, text: text(t), p: p(l) }).collect(),
    }
}

/// Collects reply text and sends it at most every `DELTA_INTERVAL` (the first piece at once).
/// Waking the receiver for every token costs real decode speed when llama.cpp's threads fill
/// every core; a window repaints at most once a frame anyway.
struct Outbox {
    pending: String,
    /// The pending text's tokens' log-probabilities, when the request asked for them.
    logprobs: Vec<TokenLogprob>,
    /// The pending text's tokens with their distributions, when the request asked for them.
    token_probs: Vec<TokenProbs>,
    last_sent: Option<Instant>,
}

/// Often enough for any reader (ChatService paces the window further, to
/// `hearth_core::WINDOW_UPDATE_INTERVAL`). Kept at 40 ms: the engine tests that stop a reply after
/// its second delta compare greedy text at the stop point this gives.
const DELTA_INTERVAL: Duration = Duration::from_millis(40);

impl Outbox {
    fn new() -> Self {
        Outbox { pending: String::new(), logprobs: Vec::new(), token_probs: Vec::new(), last_sent: None }
    }

    /// Queues a token's log-probabilities; they go just before the text they belong to.
    fn logprob(&mut self, logprob: TokenLogprob) {
        self.logprobs.push(logprob);
    }

    /// Queues a token's distribution; it goes just before the text it belongs to.
    fn token_probs(&mut self, probs: TokenProbs) {
        self.token_probs.push(probs);
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
        if !self.token_probs.is_empty() && events.send(GenEvent::TokenProbs(std::mem::take(&mut self.token_probs))).is_err() {
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
    decoder: TextDecoder,
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
