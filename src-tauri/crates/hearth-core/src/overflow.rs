//! What to send when a conversation no longer fits the model's context.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ChatMessage, Role};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum OverflowPolicy {
    /// Refuse with an error that says the conversation is too long.
    #[default]
    StopAtLimit,
    /// Keep the system prompt and the first exchange; leave out the oldest turns after it.
    TruncateMiddle,
    /// Keep the system prompt; leave out the oldest turns.
    RollingWindow,
}

/// The longest tail of `messages` that `fits`, by `policy`, and how many messages were left out;
/// `None` if nothing the policy allows fits. Turns are left out as user+assistant pairs so roles
/// keep alternating, and the last message (the new question) is always kept.
pub fn fit_context(
    messages: &[ChatMessage],
    policy: OverflowPolicy,
    mut fits: impl FnMut(&[ChatMessage]) -> bool,
) -> Option<(Vec<ChatMessage>, usize)> {
    if fits(messages) {
        return Some((messages.to_vec(), 0));
    }
    let systems = messages.iter().take_while(|m| m.role == Role::System).count();
    let keep_front = match policy {
        OverflowPolicy::StopAtLimit => return None,
        OverflowPolicy::RollingWindow => systems,
        // The first user message and the reply to it.
        OverflowPolicy::TruncateMiddle => (systems + 2).min(messages.len()),
    };
    let last = messages.len() - 1;
    let mut dropped = 0;
    while keep_front + dropped < last {
        // Drop a whole turn where possible, one message where only one is left before the last.
        dropped += if keep_front + dropped + 2 <= last { 2 } else { 1 };
        let candidate: Vec<ChatMessage> = messages[..keep_front].iter().chain(&messages[keep_front + dropped..]).cloned().collect();
        if fits(&candidate) {
            return Some((candidate, dropped));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages are written as role letter + text ("s:sys", "u:1", "a:1"); `budget` is the most
    /// messages that fit.
    fn check(policy: OverflowPolicy, history: &[&str], budget: usize, expected: Option<(&[&str], usize)>) {
        let parse = |s: &&str| {
            let (r, t) = s.split_once(':').unwrap();
            let role = match r {
                "s" => Role::System,
                "u" => Role::User,
                _ => Role::Assistant,
            };
            ChatMessage::new(role, t)
        };
        let messages: Vec<ChatMessage> = history.iter().map(parse).collect();
        let got = fit_context(&messages, policy, |m| m.len() <= budget);
        let expected = expected.map(|(kept, n)| (kept.iter().map(parse).collect::<Vec<_>>(), n));
        assert_eq!(got, expected, "{policy:?} {history:?} budget {budget}");
    }

    #[test]
    fn policies_leave_out_the_right_turns() {
        use OverflowPolicy::*;
        let chat = ["s:sys", "u:1", "a:1", "u:2", "a:2", "u:3", "a:3", "u:4"];
        check(StopAtLimit, &chat, 8, Some((&chat, 0)));
        check(StopAtLimit, &chat, 7, None);
        check(RollingWindow, &chat, 7, Some((&["s:sys", "u:2", "a:2", "u:3", "a:3", "u:4"], 2)));
        check(RollingWindow, &chat, 4, Some((&["s:sys", "u:3", "a:3", "u:4"], 4)));
        check(RollingWindow, &chat, 2, Some((&["s:sys", "u:4"], 6)));
        check(RollingWindow, &chat, 1, None);
        check(TruncateMiddle, &chat, 6, Some((&["s:sys", "u:1", "a:1", "u:3", "a:3", "u:4"], 2)));
        check(TruncateMiddle, &chat, 4, Some((&["s:sys", "u:1", "a:1", "u:4"], 4)));
        check(TruncateMiddle, &chat, 3, None);
        check(RollingWindow, &["u:1", "a:1", "u:2"], 1, Some((&["u:2"], 2)));
        check(TruncateMiddle, &["u:1", "a:1", "u:2"], 2, None);
        check(RollingWindow, &["u:only"], 0, None);
    }
}
