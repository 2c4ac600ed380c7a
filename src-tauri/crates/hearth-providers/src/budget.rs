//! The context budget of a remote model: count the conversation's tokens (with the model's own
//! tokenizer where one is known, else an estimate) and trim it by the chat's overflow policy
//! before sending, so the provider is never sent more than its context holds.

use std::sync::Arc;

use hearth_core::{BackendError, ChatMessage, OverflowPolicy, fit_context};
use tokenizers::Tokenizer;

/// Tokens a chat template adds around each message (role markers, separators).
const PER_MESSAGE: usize = 4;
/// Tokens that open the reply.
const REPLY_PRIMER: usize = 3;

/// How tokens are counted.
#[derive(Clone)]
pub enum Counter {
    /// The model's own tokenizer (`tokenizer.json`).
    Tokenizer(Arc<Tokenizer>),
    /// No tokenizer: one token per 3 ASCII characters, one per other character. English BPE
    /// vocabularies average about 4 ASCII characters a token and rarely fewer than 3 (code, digits);
    /// most other scripts take a token or more per character. So this over-counts, on purpose:
    /// a trimmed turn costs less than a refused request.
    Estimate,
}

impl Counter {
    pub fn describe(&self) -> &'static str {
        match self {
            Counter::Tokenizer(_) => "the model's tokenizer",
            Counter::Estimate => "an estimate",
        }
    }

    pub fn count_text(&self, text: &str) -> usize {
        match self {
            Counter::Tokenizer(tokenizer) => match tokenizer.encode_fast(text, false) {
                Ok(encoding) => encoding.len(),
                Err(_) => estimate(text),
            },
            Counter::Estimate => estimate(text),
        }
    }

    /// Tokens the conversation takes, template included.
    pub fn count(&self, messages: &[ChatMessage]) -> usize {
        messages.iter().map(|m| self.count_text(&m.content) + PER_MESSAGE).sum::<usize>() + REPLY_PRIMER
    }
}

fn estimate(text: &str) -> usize {
    let ascii = text.bytes().filter(u8::is_ascii).count();
    let other = text.chars().filter(|c| !c.is_ascii()).count();
    ascii.div_ceil(3) + other
}

/// The messages to send (and how many were left out) so the prompt plus room for the reply fits
/// `context_length`. The reply keeps `max_tokens` of room, but at most half the context.
pub fn fit(
    messages: &[ChatMessage],
    policy: OverflowPolicy,
    context_length: u32,
    max_tokens: u32,
    counter: &Counter,
) -> Result<(Vec<ChatMessage>, usize), BackendError> {
    let reserve = max_tokens.min(context_length / 2) as usize;
    let budget = (context_length as usize).saturating_sub(reserve);
    fit_context(messages, policy, |candidate| counter.count(candidate) <= budget)
        .ok_or_else(|| BackendError::ContextOverflow { tokens: counter.count(messages) + reserve, n_ctx: context_length })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::Role;

    #[test]
    fn the_estimate_over_counts_rather_than_under() {
        for (text, expected) in [("", 0), ("abc", 1), ("abcd", 2), ("héllo", 3), ("日本語", 3)] {
            assert_eq!(estimate(text), expected, "{text}");
        }
    }

    #[test]
    fn a_long_history_is_trimmed_by_the_policy_and_refused_when_it_must_stop() {
        let turn = "x".repeat(300); // 100 tokens + 4 by the estimate
        let messages: Vec<ChatMessage> =
            (0..9).map(|i| ChatMessage::new(if i % 2 == 0 { Role::User } else { Role::Assistant }, turn.clone())).collect();
        let counter = Counter::Estimate;
        assert_eq!(counter.count(&messages), 939);
        let (kept, dropped) = fit(&messages, OverflowPolicy::RollingWindow, 1000, 400, &counter).unwrap();
        assert_eq!((kept.len(), dropped), (5, 4), "600 tokens of room: 5 messages of 104 (+3), whole turns left out");
        assert!(fit(&messages, OverflowPolicy::StopAtLimit, 1000, 400, &counter).is_err());
        assert_eq!(fit(&messages, OverflowPolicy::StopAtLimit, 4000, 400, &counter).unwrap().1, 0);
    }
}
