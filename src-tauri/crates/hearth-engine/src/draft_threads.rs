//! How many threads read a draft ahead while the user types. One fewer than a prompt gets leaves a
//! core to the window echoing keys, and reads a draft's few tokens in ~1.5× the time at ~0.8× the
//! CPU — as long as the read ends before the next key, which is also when Enter comes. On a
//! slower machine it does not: at 5 keys a second the draft goes out 80 ms after a key
//! (`DRAFT_PACE`), 120 ms before the next, and 7 tokens at a 2,400-token context took 165 ms on
//! one thread of a 2-core machine, so a reply sent then waited for the rest of the read
//! (`typing_ttft_ms` 54–122 where 20 was met on a faster one). Every core reads it in about two
//! thirds of the time, done before the next key. So a draft sent after a pause is read on every
//! core when one fewer would outlast the typist's gap and every core would end within half a
//! gap after it (`EVERY_CORE_SLACK`: a read on two threads takes 80–150 ms here, and one that
//! misses the gap by a little still leaves Enter far less to wait for than one fewer's 150–200);
//! otherwise (a paste, and a draft sent while keys still come, `continue_last`) on one fewer.

use std::time::{Duration, Instant};

use hearth_core::DRAFT_PACE;

/// Drafts further apart than this say nothing of the typist's pace (a pause, another chat).
const MAX_KEY_GAP: Duration = Duration::from_secs(1);
/// Every core's speed over one fewer's, per thread, before it is measured: two threads read 7
/// tokens at a 2,400-token context in 75 ms where one took 117 (0.78 of twice the speed).
const EVERY_CORE_SCALING: f64 = 0.78;
/// Each read's pace weighs this much against the ones before (7 tokens on two threads took
/// 94–126 ms from one key to the next: one slow read must not swing the choice).
const NEW_READ_WEIGHT: f64 = 0.5;
/// A measure of every core older than this many drafts gives way to the estimate again: one slow
/// read (the first on a new thread count took 144 ms for 7 tokens where the next took 95–112)
/// must not keep every core from drafts for good.
const EVERY_CORE_MEMORY: u64 = 8;
/// Every core may outlast the time until the next key by this share of it: still far sooner
/// than one fewer (which the rule is only asked about when it outlasts it).
const EVERY_CORE_SLACK: f64 = 0.5;

/// The typist's pace and the reading pace on each thread count.
#[derive(Debug, Default)]
pub(crate) struct DraftThreads {
    last_arrival: Option<Instant>,
    /// Between the last two drafts: one is sent after each key at an ordinary pace.
    gap: Option<Duration>,
    /// Seconds a token of the last chunk read on one fewer thread and on every core (sizes the
    /// chunks).
    chunk_fewer: Option<f64>,
    chunk_every: Option<f64>,
    /// Seconds a token of the last whole draft read on each count, what a read costs besides its
    /// tokens included (a first chunk took 117 ms for 4 tokens, the next 42 for 3).
    pace_fewer: Option<f64>,
    pace_every: Option<f64>,
    /// Drafts that came, and the count when every core was last measured.
    drafts: u64,
    every_measured_at: u64,
}

impl DraftThreads {
    /// A draft came at `now`.
    pub(crate) fn arrived(&mut self, now: Instant) {
        self.gap = self.last_arrival.map(|last| now.saturating_duration_since(last)).filter(|gap| *gap <= MAX_KEY_GAP);
        self.last_arrival = Some(now);
        self.drafts += 1;
    }

    /// Whether `tokens` of a draft are read on every core (`every` threads) rather than one fewer
    /// (`fewer`); `still_typing`: sent while keys still come.
    pub(crate) fn every_core(&self, tokens: usize, still_typing: bool, fewer: u32, every: u32) -> bool {
        let (Some(gap), Some(pace_fewer)) = (self.gap, self.pace_fewer) else { return false };
        if still_typing || every <= fewer {
            return false;
        }
        // The draft went out `quiet` after a key; the next key (or Enter) comes a gap after it.
        let until_next_key = gap.saturating_sub(DRAFT_PACE.quiet()).as_secs_f64();
        let on_fewer = pace_fewer * tokens as f64;
        let estimate = pace_fewer * f64::from(fewer) / f64::from(every) / EVERY_CORE_SCALING;
        let recent = self.drafts.saturating_sub(self.every_measured_at) <= EVERY_CORE_MEMORY;
        let pace_every = self.pace_every.filter(|_| recent).unwrap_or(estimate);
        on_fewer > until_next_key && pace_every * tokens as f64 <= until_next_key * (1.0 + EVERY_CORE_SLACK)
    }

    /// Seconds a token of a chunk on that count, as last measured.
    pub(crate) fn chunk_pace(&self, every_core: bool) -> Option<f64> {
        if every_core { self.chunk_every } else { self.chunk_fewer }
    }

    /// A chunk was read at `per_token` seconds a token on that count.
    pub(crate) fn chunk_read(&mut self, every_core: bool, per_token: f64) {
        *(if every_core { &mut self.chunk_every } else { &mut self.chunk_fewer }) = Some(per_token);
    }

    /// A whole draft of `tokens` was read in `seconds` on that count.
    pub(crate) fn draft_read(&mut self, every_core: bool, seconds: f64, tokens: usize) {
        if tokens == 0 {
            return;
        }
        let pace = seconds / tokens as f64;
        let smoothed = |kept: Option<f64>| Some(kept.map_or(pace, |kept| kept + NEW_READ_WEIGHT * (pace - kept)));
        if every_core {
            let recent = self.drafts.saturating_sub(self.every_measured_at) <= EVERY_CORE_MEMORY;
            self.pace_every = smoothed(self.pace_every.filter(|_| recent));
            self.every_measured_at = self.drafts;
        } else {
            self.pace_fewer = smoothed(self.pace_fewer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typist(gap_ms: u64, pace_fewer_ms: f64, pace_every_ms: Option<f64>) -> DraftThreads {
        let start = Instant::now();
        let mut drafts = DraftThreads::default();
        drafts.arrived(start);
        drafts.arrived(start + Duration::from_millis(gap_ms));
        drafts.draft_read(false, pace_fewer_ms / 1000.0, 1);
        if let Some(every) = pace_every_ms {
            drafts.draft_read(true, every / 1000.0, 1);
        }
        drafts
    }

    #[test]
    fn every_core_reads_a_draft_only_when_one_fewer_would_outlast_the_gap_and_every_core_would_not() {
        // (gap between drafts ms, ms a token on one fewer, on every core, tokens, still typing, every core?)
        let cases = [
            // The faster machine: 7 tokens in 117 ms fit the 120 ms before the next key.
            (200, 16.7, None, 7, false, false),
            // This 2-core machine: 165 ms on one thread does not; ~106 ms on two does.
            (200, 23.6, None, 7, false, true),
            (200, 23.6, Some(15.0), 7, false, true),
            // Every core measured a little too slow for the gap: still far sooner than one fewer.
            (200, 23.6, Some(18.0), 7, false, true),
            // Every core measured much too slow: one fewer, the window's core kept free.
            (200, 40.0, Some(30.0), 7, false, false),
            // A long word or a paste: neither fits, one fewer.
            (200, 23.6, None, 20, false, false),
            // A slower typist leaves time for one fewer.
            (400, 23.6, None, 7, false, false),
            // Keys still coming (a burst): always one fewer.
            (200, 23.6, None, 7, true, false),
            // A pause of more than a second says nothing of the pace.
            (1500, 100.0, None, 7, false, false),
        ];
        for (gap, fewer, every, tokens, still_typing, expected) in cases {
            let drafts = typist(gap, fewer, every);
            assert_eq!(
                drafts.every_core(tokens, still_typing, 1, 2),
                expected,
                "gap {gap} ms, {fewer}/{every:?} ms a token, {tokens} tokens"
            );
        }
    }

    #[test]
    fn a_slow_read_on_every_core_is_forgotten_after_a_few_drafts() {
        let mut drafts = typist(200, 23.6, Some(27.0));
        assert!(!drafts.every_core(7, false, 1, 2), "measured too slow just now");
        let mut at = Instant::now() + Duration::from_secs(5);
        for _ in 0..=EVERY_CORE_MEMORY {
            drafts.arrived(at);
            at += Duration::from_millis(200);
        }
        assert!(drafts.every_core(7, false, 1, 2), "back to the estimate");
    }

    #[test]
    fn one_slow_read_on_every_core_does_not_swing_the_choice() {
        let mut drafts = typist(200, 23.6, Some(14.0));
        assert!(drafts.every_core(7, false, 1, 2));
        drafts.draft_read(true, 0.231, 7); // 33 ms a token: alone it would not do.
        assert!(drafts.every_core(7, false, 1, 2));
    }

    #[test]
    fn the_first_draft_and_one_core_read_as_before() {
        let mut drafts = DraftThreads::default();
        drafts.arrived(Instant::now());
        drafts.draft_read(false, 0.7, 7);
        assert!(!drafts.every_core(7, false, 1, 2), "no gap known yet");
        let typed = typist(200, 23.6, None);
        assert!(!typed.every_core(7, false, 1, 1), "one core: nothing more to take");
    }
}
