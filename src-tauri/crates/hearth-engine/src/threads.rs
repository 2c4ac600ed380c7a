//! How many threads write a reply's next token: every core, or one fewer, whichever the last
//! steps measured faster.
//!
//! llama.cpp's threads meet at a barrier after every layer, so when another program takes part
//! of a core (Hearth's own window repainting a reply, a browser) the thread there holds up the
//! others: with two threads on two cores the window's ~10 % of a core cost the engine 15–20 %
//! of its speed (docs/benchmarks.md). One thread fewer leaves that core to the other program,
//! but at a long context, or with a model that needs the arithmetic, every core writes faster.
//! Neither holds everywhere, so the engine measures: it writes with its current count, now and
//! then tries the other for a few tokens, and keeps whichever wrote faster. Only steps that
//! decode one token are timed and changed (llama.cpp's `n_threads`); prompts and batches keep
//! every core (`n_threads_batch`).

use std::time::Duration;

/// Token times compared per count: the median of this many steps.
const WINDOW: usize = 8;
/// Steps at the current count before the other is tried again, at first; doubled each time the
/// trial confirms the current count (up to `MAX_PERIOD`), so a settled choice costs little.
const FIRST_PERIOD: u32 = 48;
const MAX_PERIOD: u32 = 768;
/// The other count must be this much faster to take over (step times are noisy).
const MARGIN: f64 = 0.04;

/// The decode thread count in use, and the measurements that choose it.
#[derive(Debug, Clone)]
pub(crate) struct DecodeThreads {
    most: u32,
    /// False: always `most` (the user chose the count, or there is no fewer).
    tuned: bool,
    current: u32,
    /// The current count's last step times.
    recent: Vec<Duration>,
    /// The other count's step times while it is tried.
    trial: Option<Vec<Duration>>,
    since_trial: u32,
    period: u32,
}

impl DecodeThreads {
    /// Tuned between `most` and one fewer; fixed at `most` when `tuned` is false (the user chose a
    /// count) or there is no fewer.
    pub fn new(most: u32, tuned: bool) -> Self {
        let most = most.max(1);
        DecodeThreads {
            most,
            tuned: tuned && most >= 2,
            current: most,
            recent: Vec::with_capacity(WINDOW),
            trial: None,
            since_trial: 0,
            period: FIRST_PERIOD,
        }
    }

    /// Every core: what a step uses when it must not be tuned.
    pub fn most(&self) -> u32 {
        self.most
    }

    /// The count the next one-token step should use.
    pub fn next(&self) -> u32 {
        if self.trial.is_some() { self.other() } else { self.current }
    }

    /// A one-token step run with [`DecodeThreads::next`] took `elapsed`.
    pub fn record(&mut self, elapsed: Duration) {
        if !self.tuned {
            return;
        }
        if let Some(trial) = self.trial.as_mut() {
            trial.push(elapsed);
            if trial.len() == WINDOW {
                let tried = median(trial);
                let kept = median(&self.recent);
                self.trial = None;
                self.since_trial = 0;
                if tried.as_secs_f64() < kept.as_secs_f64() * (1.0 - MARGIN) {
                    tracing::debug!(from = self.current, to = self.other(), ?kept, ?tried, "decode threads changed");
                    self.current = self.other();
                    self.recent.clear();
                    self.period = FIRST_PERIOD;
                } else {
                    self.period = (self.period * 2).min(MAX_PERIOD);
                }
            }
            return;
        }
        if self.recent.len() == WINDOW {
            self.recent.remove(0);
        }
        self.recent.push(elapsed);
        self.since_trial += 1;
        if self.since_trial >= self.period && self.recent.len() == WINDOW {
            self.trial = Some(Vec::with_capacity(WINDOW));
        }
    }

    fn other(&self) -> u32 {
        if self.current == self.most { self.most - 1 } else { self.most }
    }
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Runs `steps` one-token steps whose time depends on the thread count; returns the counts used.
    fn run(threads: &mut DecodeThreads, steps: usize, time: impl Fn(u32, usize) -> Duration) -> Vec<u32> {
        (0..steps)
            .map(|step| {
                let n = threads.next();
                threads.record(time(n, step));
                n
            })
            .collect()
    }

    #[test]
    fn keeps_every_core_while_it_is_faster_and_tries_the_other_ever_more_rarely() {
        let mut threads = DecodeThreads::new(4, true);
        let used = run(&mut threads, 4000, |n, _| if n == 4 { 8 * MS } else { 11 * MS });
        let fewer = used.iter().filter(|&&n| n == 3).count();
        assert_eq!(threads.next(), 4);
        assert!(fewer > 0, "the other count is tried");
        assert!(fewer * 100 / used.len() < 3, "trials cost little once settled: {fewer} of {} steps", used.len());
    }

    #[test]
    fn moves_to_one_fewer_when_a_core_is_taken_and_back_when_it_is_free_again() {
        let mut threads = DecodeThreads::new(2, true);
        // Another program takes part of a core from step 200 to 1200: two threads stall at the barrier.
        let busy = |step: usize| (200..1200).contains(&step);
        let used = run(&mut threads, 2000, |n, step| match (n, busy(step)) {
            (2, false) => 7 * MS,
            (2, true) => 10 * MS,
            (_, _) => 8 * MS,
        });
        assert_eq!(used[100], 2);
        assert_eq!(used[1100], 1, "one thread fewer while the core is taken");
        assert_eq!(used[1999], 2, "every core again once it is free");
    }

    #[test]
    fn noise_within_the_margin_changes_nothing() {
        let mut threads = DecodeThreads::new(2, true);
        let used = run(&mut threads, 1000, |n, step| if n == 2 { 10 * MS } else { (98 + (step % 3) as u32) * MS / 10 });
        assert!(used.iter().rev().take(100).filter(|&&n| n == 2).count() > 90);
    }

    #[test]
    fn a_count_the_user_chose_or_a_single_core_is_never_changed() {
        for mut threads in [DecodeThreads::new(4, false), DecodeThreads::new(1, true)] {
            let most = threads.next();
            let used = run(&mut threads, 1000, |n, _| if n == most { 50 * MS } else { MS });
            assert!(used.iter().all(|&n| n == most));
        }
    }
}
