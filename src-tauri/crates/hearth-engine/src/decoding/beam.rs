//! Beam search: the likeliest reply, followed `width` partial replies (beams) at a time.
//!
//! [`Search`] is the bookkeeping alone — which beams live on, which are finished, which lane
//! (KV sequence) each beam writes in and which lanes must first copy another's cells — so it
//! is tested without a model. [`BeamReply`] runs it in the scheduler: every live beam's next
//! token goes into the step's batch; a beam that forks shares its parent's cells (`seq_cp` in
//! the unified cache tags cells, it copies nothing).

use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc::UnboundedSender;

use hearth_core::{BeamHypothesis, FinishReason, GenEvent, ReplyRequest, ReplyStats, TextReading};

use super::beam_reasoning::BeamReasoning;
use super::{AfterDecode, Decoder, Lane, Room, Written};

/// A partial reply being followed.
#[derive(Debug, Clone, PartialEq)]
pub struct Beam<T> {
    pub tokens: Vec<T>,
    /// Sum of its tokens' log-probabilities.
    pub logprob: f64,
    /// The lane (KV sequence of the search) its cells are in.
    pub lane: usize,
    /// Its parent among the beams before the last step (its grammar state comes from there).
    pub parent: usize,
}

/// A reply the search finished.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished<T> {
    /// Without the end-of-turn token.
    pub tokens: Vec<T>,
    pub logprob: f64,
    pub score: f64,
    /// Tokens counted for the length penalty (the end-of-turn token included).
    pub length: usize,
    pub reason: FinishReason,
}

/// Lane `to` takes a copy of lane `from`'s cells before the next decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fork {
    pub from: usize,
    pub to: usize,
}

pub struct Search<T> {
    width: usize,
    keep: usize,
    length_penalty: f64,
    early_stopping: bool,
    max_tokens: usize,
    pub live: Vec<Beam<T>>,
    finished: Vec<Finished<T>>,
}

impl<T: Copy + PartialEq> Search<T> {
    /// One beam, empty, in lane 0 (where the prompt is).
    pub fn new(width: usize, length_penalty: f64, early_stopping: bool, max_tokens: usize) -> Self {
        let start = Beam { tokens: Vec::new(), logprob: 0.0, lane: 0, parent: 0 };
        Search { width, keep: width, length_penalty, early_stopping, max_tokens, live: vec![start], finished: Vec::new() }
    }

    fn score(&self, logprob: f64, length: usize) -> f64 {
        logprob / (length.max(1) as f64).powf(self.length_penalty)
    }

    /// One step: `candidates[b]` are beam `b`'s likeliest allowed next tokens with their
    /// log-probabilities. The `width` best extensions live on; an end of turn among the `width`
    /// best finishes its beam (ranked lower it is ignored, so width 1 is greedy decoding). Returns
    /// the lanes to copy before the new beams' tokens are decoded.
    pub fn advance(&mut self, candidates: &[Vec<(T, f64)>], is_end: impl Fn(T) -> bool) -> Vec<Fork> {
        let mut all: Vec<(f64, usize, T)> = candidates
            .iter()
            .enumerate()
            .flat_map(|(b, tokens)| tokens.iter().map(move |&(token, logprob)| (logprob, b, token)))
            .map(|(logprob, b, token)| (self.live[b].logprob + logprob, b, token))
            .collect();
        all.sort_by(|x, y| y.0.total_cmp(&x.0));
        let mut next: Vec<Beam<T>> = Vec::new();
        let mut taken = 0;
        for (rank, &(logprob, parent, token)) in all.iter().enumerate() {
            if taken == self.width {
                break;
            }
            let mut tokens = self.live[parent].tokens.clone();
            if is_end(token) {
                if rank < self.width {
                    let length = tokens.len() + 1;
                    self.finish(Finished { tokens, logprob, score: self.score(logprob, length), length, reason: FinishReason::EndOfTurn });
                }
                continue;
            }
            tokens.push(token);
            taken += 1;
            if tokens.len() >= self.max_tokens {
                let length = tokens.len();
                self.finish(Finished { tokens, logprob, score: self.score(logprob, length), length, reason: FinishReason::Length });
            } else {
                next.push(Beam { tokens, logprob, lane: usize::MAX, parent });
            }
        }
        let forks = self.assign_lanes(&mut next);
        self.live = next;
        forks
    }

    /// A parent's first child keeps its lane; the others take lanes no beam keeps, copied from it.
    fn assign_lanes(&self, next: &mut [Beam<T>]) -> Vec<Fork> {
        let mut kept = vec![false; self.width];
        let mut parent_placed = vec![false; self.live.len()];
        for child in next.iter_mut() {
            if !parent_placed[child.parent] {
                parent_placed[child.parent] = true;
                child.lane = self.live[child.parent].lane;
                kept[child.lane] = true;
            }
        }
        let mut free = (0..self.width).filter(|&lane| !kept[lane]);
        let mut forks = Vec::new();
        for child in next.iter_mut().filter(|c| c.lane == usize::MAX) {
            let to = free.next().expect("at most `width` beams, one lane each");
            forks.push(Fork { from: self.live[child.parent].lane, to });
            child.lane = to;
        }
        forks
    }

    fn finish(&mut self, done: Finished<T>) {
        let at = self.finished.partition_point(|f| f.score >= done.score);
        self.finished.insert(at, done);
        self.finished.truncate(self.keep);
    }

    /// No beam is left, or none can beat the finished ones: `width` are finished and, unless
    /// stopping early, the best live beam's score so far is no better than the worst of them.
    pub fn is_done(&self) -> bool {
        if self.live.is_empty() {
            return true;
        }
        if self.finished.len() < self.width {
            return false;
        }
        if self.early_stopping {
            return true;
        }
        let worst = self.finished[self.width - 1].score;
        self.live.iter().all(|b| self.score(b.logprob, b.tokens.len()) <= worst)
    }

    /// The best `n` finished replies, best first; live beams stand in when none finished (a
    /// search cut short).
    pub fn best(&self, n: usize) -> Vec<Finished<T>> {
        let mut out: Vec<Finished<T>> = self.finished.iter().take(n).cloned().collect();
        if out.is_empty() {
            out = self
                .live
                .iter()
                .map(|b| Finished {
                    tokens: b.tokens.clone(),
                    logprob: b.logprob,
                    score: self.score(b.logprob, b.tokens.len()),
                    length: b.tokens.len(),
                    reason: FinishReason::Length,
                })
                .collect();
            out.sort_by(|a, b| b.score.total_cmp(&a.score));
            out.truncate(n);
        }
        out
    }
}

/// A beam-search reply in the scheduler: the slots it holds (one per lane; lane 0 reads the
/// prompt), the search, and each live beam's constraint state (grammar, biases).
pub(crate) struct BeamReply {
    request: ReplyRequest,
    events: UnboundedSender<GenEvent>,
    /// The slot of each lane.
    lanes: Vec<usize>,
    /// Prompt tokens not yet read into lane 0.
    prompt: Vec<LlamaToken>,
    search: Search<LlamaToken>,
    /// Each live beam's constraints, in the order of `search.live`.
    constraints: Vec<Option<LlamaSampler>>,
    /// Where each live beam's logits are in the batch just decoded.
    logits_at: Vec<i32>,
    stats: ReplyStats,
    started: Instant,
    /// Beam tokens decoded, and when the first was: the search's decode speed.
    decoded: u32,
    decoding_since: Option<Instant>,
    /// How the replies' text is written from their tokens' (gpt-oss's channels read, a
    /// reasoning block the prompt opened).
    reading: TextReading,
    /// The reasoning budget, and each live beam's reasoning under it (in `search.live`'s order;
    /// empty without a budget).
    budget: Option<u32>,
    reasoning: Vec<BeamReasoning>,
}

impl BeamReply {
    #[allow(clippy::too_many_arguments)] // One reply's whole setup, handed over once.
    pub fn new(
        request: ReplyRequest,
        events: UnboundedSender<GenEvent>,
        lanes: Vec<usize>,
        prompt: Vec<LlamaToken>,
        constraints: Option<LlamaSampler>,
        max_tokens: u32,
        stats: ReplyStats,
        started: Instant,
    ) -> Self {
        let s = &request.sampling;
        let search = Search::new(lanes.len(), f64::from(s.length_penalty), s.early_stopping, max_tokens.max(1) as usize);
        let budget = BeamReasoning::budget(&request);
        BeamReply {
            request,
            events,
            lanes,
            prompt,
            search,
            constraints: vec![constraints],
            logits_at: Vec::new(),
            stats,
            started,
            decoded: 0,
            decoding_since: None,
            reading: TextReading::Raw,
            reasoning: budget.map(|_| BeamReasoning::new(TextReading::Raw)).into_iter().collect(),
            budget,
        }
    }

    /// The replies' text is written from their tokens' text so (as a sampled reply's is).
    pub fn read_as(&mut self, reading: TextReading) {
        self.reading = reading;
        for beam in &mut self.reasoning {
            *beam = BeamReasoning::new(reading);
        }
    }

    /// After the batch is decoded: extends the beams, returns the forks to make. Nothing when
    /// this reply had no logits in the batch.
    fn expand(&mut self, context: &LlamaContext<'_>, model: &LlamaModel) -> Vec<Fork> {
        if self.logits_at.is_empty() {
            return Vec::new();
        }
        let per_beam = 2 * self.lanes.len();
        // A beam whose reasoning budget is spent writes its closing: Hearth's tokens, not the
        // model's choice, so they cost the beam nothing.
        let forced = |beam: usize| self.reasoning.get(beam).and_then(BeamReasoning::forced);
        let candidates: Vec<Vec<(LlamaToken, f64)>> = self
            .logits_at
            .iter()
            .zip(self.constraints.iter_mut())
            .enumerate()
            .map(|(beam, (&at, constraint))| match forced(beam) {
                Some(token) => vec![(token, 0.0)],
                None => likeliest(context, at, constraint.as_mut(), per_beam),
            })
            .collect();
        let vocab = model.vocab();
        let forks = self.search.advance(&candidates, |t| vocab.is_eog(t));
        if self.budget.is_some() {
            self.reasoning = self
                .search
                .live
                .iter()
                .map(|beam| {
                    let mut own = self.reasoning[beam.parent].clone();
                    own.push(*beam.tokens.last().expect("a new beam has its token"), model, self.budget);
                    own
                })
                .collect();
        }
        // Each new beam's constraint state: its parent's, with its new token accepted.
        self.constraints = self
            .search
            .live
            .iter()
            .map(|beam| {
                self.constraints[beam.parent].as_ref().map(|parent| {
                    let mut own = parent.clone();
                    own.accept(*beam.tokens.last().expect("a new beam has its token"));
                    own
                })
            })
            .collect();
        self.logits_at.clear();
        forks
    }
}

impl Decoder for BeamReply {
    fn request(&self) -> &ReplyRequest {
        &self.request
    }

    fn events(&self) -> &UnboundedSender<GenEvent> {
        &self.events
    }

    fn lanes(&self) -> &[usize] {
        &self.lanes
    }

    fn prompt(&self) -> &[LlamaToken] {
        &self.prompt
    }

    fn take_prompt(&mut self, n: usize) -> Vec<LlamaToken> {
        self.prompt.drain(..n.min(self.prompt.len())).collect()
    }

    fn prompt_read(&mut self, at: i32) {
        self.logits_at = vec![at];
    }

    fn writing(&self) -> usize {
        if self.prompt.is_empty() { self.search.live.len() } else { 0 }
    }

    /// Every live beam's last token, or nothing this step when the batch has no room for all.
    fn write(&mut self, batch: &mut LlamaBatch, lanes: &[Lane<'_>], room: Room<'_>) -> Written {
        self.logits_at.clear();
        let live = self.search.live.len();
        if room.cells <= self.lanes.len() {
            return Written::Full; // Every lane may need a cell more.
        }
        if room.batch < live {
            return Written::Tokens(Vec::new()); // Next step: beams go into a batch together or not at all.
        }
        self.decoding_since.get_or_insert_with(Instant::now);
        self.decoded += live as u32;
        let mut added = Vec::new();
        for beam in &self.search.live {
            let lane = &lanes[beam.lane];
            let token = *beam.tokens.last().expect("a live beam has a token to decode");
            let _ = batch.add(token, lane.next_pos, &[lane.seq], true);
            self.logits_at.push(batch.n_tokens() - 1);
            added.push((beam.lane, vec![token]));
        }
        Written::Tokens(added)
    }

    fn after_decode(&mut self, context: &LlamaContext<'_>, model: &LlamaModel) -> AfterDecode {
        let stepped = !self.logits_at.is_empty();
        let forks = self.expand(context, model);
        // The search picks its own reason when it ends.
        let done = self.prompt.is_empty() && self.search.is_done();
        // Nothing shows until the search ends: say how far it has got (its beams are all as long).
        if stepped
            && !done
            && let Some(beam) = self.search.live.first()
        {
            let _ = self.events.send(GenEvent::Searching { tokens: beam.tokens.len() as u32 });
        }
        AfterDecode { forks, rejected: 0, finish: done.then_some(FinishReason::EndOfTurn) }
    }

    /// Sends the best finished reply (cut at a stop string) and the n best with the stats.
    fn finish(mut self: Box<Self>, reason: FinishReason, model: &LlamaModel) {
        let cancelled = reason == FinishReason::Cancelled;
        let vocab = model.vocab();
        let reading = self.reading;
        let text = |tokens: &[LlamaToken]| {
            let bytes: Vec<u8> = tokens.iter().flat_map(|&t| vocab.token_to_piece(t, false, None)).collect();
            reading.read(&String::from_utf8_lossy(&bytes))
        };
        let best = self.search.best((self.request.sampling.n_best as usize).min(self.lanes.len()));
        let hypotheses: Vec<BeamHypothesis> = best
            .iter()
            .map(|f| BeamHypothesis { text: text(&f.tokens), logprob: f.logprob, score: f.score, tokens: f.length as u32 })
            .collect();
        let mut reply = hypotheses.first().map(|h| h.text.clone()).unwrap_or_default();
        let mut reason = best.first().map_or(FinishReason::Length, |f| f.reason);
        if let Some(cut) = self.request.sampling.stop.iter().filter_map(|s| reply.find(s.as_str())).min() {
            reply.truncate(cut);
            reason = FinishReason::StopString;
        }
        if cancelled {
            reason = FinishReason::Cancelled;
        }
        self.stats.completion_tokens = best.first().map_or(0, |f| f.tokens.len() as u32);
        self.stats.reasoning_tokens = best.first().and_then(|f| BeamReasoning::count(reading, &f.tokens, model));
        // The reply appears when the search ends: that is its time to first token.
        self.stats.ttft_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        self.stats.beams = Some(hypotheses);
        // Every beam's tokens per second: the engine's speed, not the reply's.
        let decoding = self.decoding_since.map_or(0.0, |t| t.elapsed().as_secs_f64());
        self.stats.decode_tps = if decoding > 0.0 { f64::from(self.decoded) / decoding } else { 0.0 };
        if !reply.is_empty() {
            let _ = self.events.send(GenEvent::Delta(reply));
        }
        let _ = self.events.send(GenEvent::Finished { reason, stats: self.stats });
    }
}

/// The `n` likeliest tokens at batch position `at` that `constraint` allows, with their
/// log-probabilities under the model (the log-softmax of the raw logits).
fn likeliest(context: &LlamaContext<'_>, at: i32, constraint: Option<&mut LlamaSampler>, n: usize) -> Vec<(LlamaToken, f64)> {
    let logits = context.get_logits_ith(at);
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let log_sum = f64::from(max) + logits.iter().map(|&l| f64::from(l - max).exp()).sum::<f64>().ln();
    let allowed: Vec<LlamaToken> = match constraint {
        Some(constraint) => {
            let mut array = context.token_data_array_ith(at);
            array.apply_sampler(constraint);
            array.data.iter().filter(|d| d.logit().is_finite()).map(|d| d.id()).collect()
        }
        None => (0..logits.len() as i32).map(LlamaToken).collect(),
    };
    let mut scored: Vec<(LlamaToken, f64)> = allowed.into_iter().map(|t| (t, f64::from(logits[t.0 as usize]) - log_sum)).collect();
    let by_logprob = |a: &(LlamaToken, f64), b: &(LlamaToken, f64)| b.1.total_cmp(&a.1);
    if n < scored.len() {
        scored.select_nth_unstable_by(n, by_logprob);
        scored.truncate(n);
    }
    scored.sort_by(by_logprob);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    const END: char = '$';

    /// A toy model: the log-probability of each next character after `prefix`.
    fn toy(prefix: &[char]) -> Vec<(char, f64)> {
        let p = |pairs: &[(char, f64)]| pairs.iter().map(|&(c, p)| (c, p.ln())).collect();
        match prefix {
            // Greedy takes "a" (0.5), then finds only weak continuations; "b" (0.4) leads to a
            // sure one: the likeliest whole reply is "bd$" (0.4 × 0.9 × 1), not "ac$" (0.5 × 0.4 × 1).
            [] => p(&[('a', 0.5), ('b', 0.4), ('c', 0.1)]),
            ['a'] => p(&[('c', 0.4), ('d', 0.3), (END, 0.3)]),
            ['b'] => p(&[('d', 0.9), (END, 0.1)]),
            _ => p(&[(END, 1.0)]),
        }
    }

    fn run(width: usize, early: bool, penalty: f64) -> (Vec<String>, Vec<Vec<Fork>>) {
        let mut search = Search::new(width, penalty, early, 10);
        let mut forks = Vec::new();
        while !search.is_done() {
            let candidates: Vec<Vec<(char, f64)>> = search.live.iter().map(|b| toy(&b.tokens)).collect();
            forks.push(search.advance(&candidates, |c| c == END));
            // Every live beam has a lane of its own.
            let mut lanes: Vec<usize> = search.live.iter().map(|b| b.lane).collect();
            lanes.sort();
            lanes.dedup();
            assert_eq!(lanes.len(), search.live.len());
            assert!(lanes.iter().all(|&l| l < width));
        }
        (search.best(width).iter().map(|f| f.tokens.iter().collect()).collect(), forks)
    }

    #[test]
    fn width_one_is_greedy_and_a_wider_beam_finds_the_likelier_reply() {
        let cases: &[(usize, bool, f64, &[&str])] = &[
            (1, true, 1.0, &["ac"]),
            // Width 2 keeps "b" alive and finds "bd" (0.36) over "ac" (0.20) and "a" (0.15).
            (2, true, 0.0, &["bd", "ac"]),
            (3, true, 0.0, &["bd", "ac", "ad"]),
            // Without early stopping the search runs until no live beam can win: the same here.
            (2, false, 0.0, &["bd", "ac"]),
        ];
        for &(width, early, penalty, expected) in cases {
            let (best, _) = run(width, early, penalty);
            assert_eq!(best, expected, "width {width}, early {early}, penalty {penalty}");
        }
    }

    #[test]
    fn a_beam_that_forks_copies_its_parents_lane_into_a_free_one() {
        let (_, forks) = run(2, true, 0.0);
        // Step 1: the prompt's lane 0 forks into "a" (lane 0) and "b" (lane 1, a copy of 0).
        assert_eq!(forks[0], [Fork { from: 0, to: 1 }]);
        // Step 2: "bd" stays in lane 1 and "ac" in lane 0: no copy.
        assert_eq!(forks[1], []);
    }

    #[test]
    fn the_length_penalty_ranks_finished_replies_by_log_probability_per_token() {
        let mut search = Search::new(2, 1.0, true, 10);
        let sure = |tokens: &[(char, f64)]| tokens.iter().map(|&(c, p)| (c, f64::ln(p))).collect::<Vec<_>>();
        // One step: "x" ends at once (length 1 with its end, 0.3); "y" goes on.
        search.advance(&[sure(&[(END, 0.3), ('y', 0.7)])], |c| c == END);
        assert_eq!(search.live.len(), 1);
        // "y" then ends with 0.5: 0.35 in all over 2 tokens, per token ln(0.35)/2 > ln(0.3).
        search.advance(&[sure(&[(END, 0.5), ('z', 0.5)])], |c| c == END);
        let best: Vec<String> = search.best(2).iter().map(|f| f.tokens.iter().collect()).collect();
        assert_eq!(best, ["y", ""]);
        let mut short = Search::new(2, 0.0, true, 10);
        short.advance(&[sure(&[(END, 0.3), ('y', 0.7)])], |c| c == END);
        short.advance(&[sure(&[(END, 0.5), ('z', 0.5)])], |c| c == END);
        // Without the penalty the sum decides: 0.35 > 0.3 still, so "y" — and the lengths count the end.
        assert_eq!(short.best(2).iter().map(|f| f.length).collect::<Vec<_>>(), [2, 1]);
    }
}
