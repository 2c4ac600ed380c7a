//! Engine restarts that back off: a process that keeps dying (a hostile request sent in a loop,
//! a driver that fails every time) is started again after a growing wait, so a loop of
//! failures cannot spin the machine, and the wait is said in words.

use std::time::{Duration, Instant};

/// How restarts back off after crashes in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartBackoff {
    /// Crashes in a row that are answered by an immediate restart.
    pub free_restarts: u32,
    /// The wait after the first crash past those; it doubles with each further one.
    pub first_wait: Duration,
    pub max_wait: Duration,
    /// A process that ran this long before it died ends the streak: its crash counts as the first.
    pub stable_after: Duration,
}

impl Default for RestartBackoff {
    fn default() -> Self {
        RestartBackoff {
            free_restarts: 2,
            first_wait: Duration::from_secs(1),
            max_wait: Duration::from_secs(30),
            stable_after: Duration::from_secs(60),
        }
    }
}

impl RestartBackoff {
    /// The wait before restarting after the `streak`-th crash in a row (1 for the first).
    pub fn wait_after(&self, streak: u32) -> Duration {
        let Some(past_free) = streak.checked_sub(self.free_restarts + 1) else { return Duration::ZERO };
        let factor = 1u32.checked_shl(past_free).unwrap_or(u32::MAX);
        self.first_wait.checked_mul(factor).unwrap_or(self.max_wait).min(self.max_wait)
    }
}

/// Crashes in a row, and when the next process may start.
#[derive(Debug, Default)]
pub(super) struct CrashStreak {
    streak: u32,
    restart_at: Option<Instant>,
}

impl CrashStreak {
    /// A process that ran for `lived` died at `now`: how long to wait before starting another.
    pub fn record(&mut self, backoff: &RestartBackoff, lived: Duration, now: Instant) -> Duration {
        if lived >= backoff.stable_after {
            self.streak = 0;
        }
        self.streak = self.streak.saturating_add(1);
        let wait = backoff.wait_after(self.streak);
        self.restart_at = (!wait.is_zero()).then(|| now + wait);
        wait
    }

    pub fn streak(&self) -> u32 {
        self.streak
    }

    /// How long until a process may start again; `None` when it may now.
    pub fn waiting(&self, now: Instant) -> Option<Duration> {
        self.restart_at.and_then(|at| at.checked_duration_since(now)).filter(|wait| !wait.is_zero())
    }

    /// The wait is over and no process runs: the caller starts one now.
    pub fn due(&mut self, now: Instant) -> bool {
        let due = self.restart_at.is_some_and(|at| at <= now);
        if due {
            self.restart_at = None;
        }
        due
    }
}

/// What a crash's cause says when the restart waits.
pub(super) fn waiting_words(cause: &str, streak: u32, wait: Duration) -> String {
    format!("{cause}. The engine has died {streak} times in a row, so it starts again in {} s", wait.as_secs_f32().ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn the_wait_doubles_after_the_free_restarts_up_to_its_cap() {
        let backoff = RestartBackoff::default();
        let waits: Vec<u64> = (1..=9).map(|streak| backoff.wait_after(streak).as_secs()).collect();
        assert_eq!(waits, [0, 0, 1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(backoff.wait_after(u32::MAX), S(30), "no overflow however long the streak");
    }

    #[test]
    fn a_process_that_lived_long_ends_the_streak() {
        let backoff = RestartBackoff::default();
        let mut streak = CrashStreak::default();
        let now = Instant::now();
        // (how long the process lived, the wait before the next one)
        let cases = [(S(1), S(0)), (S(2), S(0)), (S(1), S(1)), (S(5), S(2)), (S(61), S(0)), (S(1), S(0)), (S(1), S(1))];
        for (lived, wait) in cases {
            assert_eq!(streak.record(&backoff, lived, now), wait, "after a process that lived {lived:?}");
        }
    }

    #[test]
    fn the_wait_is_told_then_due_once() {
        let backoff = RestartBackoff { free_restarts: 0, ..RestartBackoff::default() };
        let mut streak = CrashStreak::default();
        let now = Instant::now();
        streak.record(&backoff, S(0), now);
        assert_eq!(streak.waiting(now), Some(S(1)));
        assert!(!streak.due(now));
        assert_eq!(streak.waiting(now + S(1)), None);
        assert!(streak.due(now + S(1)));
        assert!(!streak.due(now + S(2)), "the restart is owed once");
        assert_eq!(
            waiting_words("the model crashed", 3, Duration::from_millis(1500)),
            "the model crashed. The engine has died 3 times in a row, so it starts again in 2 s"
        );
    }
}
