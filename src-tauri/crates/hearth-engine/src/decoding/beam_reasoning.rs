//! A beam's reasoning under a budget (`sampling.reasoning_budget`), as a sampled reply's: its
//! tokens read as the reply's text, its reasoning tokens counted, and once the budget is spent
//! the block closed as the model would close it. Each beam carries its own, copied when it forks.

use std::collections::VecDeque;

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use hearth_core::{ReasoningCounter, ReplyRequest, THINK_CLOSING, TextReader, TextReading, harmony};

#[derive(Debug, Clone)]
pub(crate) struct BeamReasoning {
    reader: TextReader,
    counter: ReasoningCounter,
    /// The closing still to write, once the budget is spent.
    forced: VecDeque<LlamaToken>,
    closed: bool,
    /// How the block is closed: gpt-oss's channels, or `</think>`.
    closing: &'static str,
}

impl BeamReasoning {
    /// A beam's reasoning before its first token, its text read so.
    pub fn new(reading: TextReading) -> BeamReasoning {
        let mut reader = reading.reader();
        let mut counter = ReasoningCounter::default();
        if !reader.opening().is_empty() {
            counter.opened_by_prompt();
        }
        let channels = matches!(reading, TextReading::Channels | TextReading::OpenedChannels);
        let closing = if channels { harmony::ANALYSIS_TO_FINAL } else { THINK_CLOSING };
        BeamReasoning { reader, counter, forced: VecDeque::new(), closed: false, closing }
    }

    /// The budget that binds `request`'s beams: none when it has none, or when a grammar decides
    /// every token (as for a sampled reply: a closing it refuses would end the search).
    pub fn budget(request: &ReplyRequest) -> Option<u32> {
        let sampling = &request.sampling;
        let unconstrained = sampling.constraint.is_none() && request.tools.is_none();
        u32::try_from(sampling.reasoning_budget).ok().filter(|_| unconstrained)
    }

    /// The token the beam must write next: the closing of its spent budget.
    pub fn forced(&self) -> Option<LlamaToken> {
        self.forced.front().copied()
    }

    /// The beam wrote `token`; past `budget` reasoning tokens, its block is to be closed.
    pub fn push(&mut self, token: LlamaToken, model: &LlamaModel, budget: Option<u32>) {
        if self.forced.front() == Some(&token) {
            self.forced.pop_front();
        }
        // Tags and markers are ASCII: a character split across tokens cannot hide one.
        let piece = model.vocab().token_to_piece(token, false, None);
        self.counter.token(&self.reader.push(&String::from_utf8_lossy(&piece)));
        let spent = budget.is_some_and(|budget| self.counter.tokens().unwrap_or(0) >= budget);
        if spent && !self.closed && self.counter.thinking() {
            self.closed = true;
            self.forced = model.vocab().tokenize(self.closing.as_bytes(), false, true).into();
        }
    }

    /// The reasoning tokens of a finished reply's `tokens` (`stats.reasoning_tokens`).
    pub fn count(reading: TextReading, tokens: &[LlamaToken], model: &LlamaModel) -> Option<u32> {
        let mut reasoning = BeamReasoning::new(reading);
        for &token in tokens {
            reasoning.push(token, model, None);
        }
        reasoning.counter.tokens()
    }
}
