//! When the draft being typed goes to the engine to be read ahead (prefill while typing). The
//! window's composer paces its sends by these numbers (contract.json); `hearth-cli bench` types
//! by them.
//!
//! Each send costs the engine the message's last word again (a word cut by the previous send is
//! read again whole), and after a pause the turn's closing and the reply's opening, a handful of
//! tokens; what it saves is everything typed before it. A send while keys still come is read up
//! to its last word only (the closing would be read again at the next send). At Enter only what
//! was typed after the last send is left, plus that closing — so the last send should come after
//! the last key, and typing at an ordinary pace leaves a short gap after each key: the draft goes
//! out then, whole. Faster typing is sent every `max_wait_ms` (a burst of keys before Enter leaves
//! at most that much unread).

use std::time::Duration;

use serde::Serialize;

/// The composer's pacing of read-ahead sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftPace {
    /// No keystroke for this long: the draft goes out (so at an ordinary pace, after each key; a
    /// paste or a burst goes as one, and Enter right after a key does not read it twice).
    pub quiet_ms: u64,
    /// Typing faster than that: the draft goes out at the latest this long after its first key
    /// not yet sent.
    pub max_wait_ms: u64,
    /// Never two sends closer than this (each re-reads a few tokens).
    pub min_gap_ms: u64,
}

/// The pace the window and the bench use.
pub const DRAFT_PACE: DraftPace = DraftPace { quiet_ms: 80, max_wait_ms: 200, min_gap_ms: 150 };
const _: () = assert!(DRAFT_PACE.quiet_ms < DRAFT_PACE.min_gap_ms && DRAFT_PACE.min_gap_ms < DRAFT_PACE.max_wait_ms);

impl DraftPace {
    pub fn quiet(&self) -> Duration {
        Duration::from_millis(self.quiet_ms)
    }

    /// Whether a typist pressing a key every `key_gap` has each key's draft sent `quiet` after it
    /// (no send skipped, none held back by the gap between sends).
    pub fn sends_every_key(&self, key_gap: Duration) -> bool {
        key_gap > self.quiet() && key_gap >= Duration::from_millis(self.min_gap_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinary_typist_has_each_key_read_ahead() {
        // Up to ~6 characters a second (issue 16's typist types 5): a send after each key.
        for (cps, each_key) in [(2.0, true), (5.0, true), (6.0, true), (10.0, false), (30.0, false)] {
            assert_eq!(DRAFT_PACE.sends_every_key(Duration::from_secs_f64(1.0 / cps)), each_key, "{cps} chars/s");
        }
    }
}
