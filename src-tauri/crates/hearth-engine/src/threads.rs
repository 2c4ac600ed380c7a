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
//!
//! A stalled barrier can cost far more than a share of a core: on a 16-core virtual machine
//! beside one spinning core, 16 threads wrote 9 tok/s where 15 wrote 268 (docs/benchmarks.md).
//! So the first trial comes after three steps, every core slowing down well past what it wrote
//! at when chosen puts one fewer on trial at once, a trial that has already cost more than a
//! window of the current count's steps ends there, and trials are spaced by what they cost (at
//! most 5 % of the time).

use std::time::Duration;

/// Token times compared per count: the median of this many steps.
const WINDOW: usize = 8;
/// … and for the first choice, made as soon as writing starts (a stalled count's steps can take
/// a second each).
const FIRST_WINDOW: usize = 3;
/// Steps at the current count before the other is tried again, after the first trial (which
/// comes after `FIRST_WINDOW` steps); doubled each time the trial confirms the current count (up to
/// `MAX_PERIOD`), so a settled choice costs little.
const FIRST_PERIOD: u32 = 48;
const MAX_PERIOD: u32 = 768;
/// The other count must be this much faster to take over (step times are noisy).
const MARGIN: f64 = 0.04;
/// Trials may take at most this share of the time spent writing: one step of a stalled count
/// can cost a hundred of the other's.
const TRIAL_SHARE: f64 = 0.05;
/// The current count's steps this much slower than when it was chosen or last confirmed: the
/// machine changed (another program took a core), so one fewer is tried at once.
const SLOWDOWN: f64 = 1.5;

/// The decode thread count in use, and the measurements that choose it.
#[derive(Debug, Clone)]
pub(crate) struct DecodeThreads {
    most: u32,
    /// False: always `most` (the user chose the count, or there is no fewer).
    tuned: bool,
    current: u32,
    /// The current count's last step times.
    recent: Vec<Duration>,
    /// The current count's median step when it was chosen or last confirmed.
    settled: Option<Duration>,
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
            settled: None,
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
        let window = self.window();
        if let Some(trial) = self.trial.as_mut() {
            trial.push(elapsed);
            let kept = median(&self.recent);
            let spent: Duration = trial.iter().sum();
            let done = trial.len() == window;
            if done || spent > kept.saturating_mul(window as u32) {
                // Cut short, the other count lost: its steps so far cost more than a window of ours.
                let tried = if done { median(trial) } else { spent / trial.len() as u32 };
                self.trial = None;
                self.since_trial = 0;
                if done && tried.as_secs_f64() < kept.as_secs_f64() * (1.0 - MARGIN) {
                    tracing::debug!(from = self.current, to = self.other(), ?kept, ?tried, "decode threads changed");
                    self.current = self.other();
                    self.recent.clear();
                    self.settled = Some(tried);
                    self.period = FIRST_PERIOD.max(spacing(tried, kept));
                } else {
                    // The first trial does not count towards the doubling.
                    let doubled = if self.settled.is_some() { self.period.saturating_mul(2).min(MAX_PERIOD) } else { self.period };
                    self.period = doubled.max(spacing(kept, tried));
                    self.settled = Some(kept);
                }
            }
            return;
        }
        if self.recent.len() == WINDOW {
            self.recent.remove(0);
        }
        self.recent.push(elapsed);
        self.since_trial += 1;
        if self.recent.len() < window {
            return;
        }
        // Only every core stalls when another program takes a core; one fewer slowing down says
        // nothing about every core, which is tried on the period alone.
        let slowed = self.current == self.most
            && self.settled.is_some_and(|settled| median(&self.recent).as_secs_f64() > settled.as_secs_f64() * SLOWDOWN);
        if self.settled.is_none() || slowed || self.since_trial >= self.period {
            if slowed {
                tracing::debug!(threads = self.current, "decode steps slowed down: trying one thread fewer");
            }
            self.trial = Some(Vec::with_capacity(WINDOW));
        }
    }

    /// Steps timed per count for a choice: fewer for the first, so that a count that stalls from
    /// the first token is left within a few.
    fn window(&self) -> usize {
        if self.settled.is_some() { WINDOW } else { FIRST_WINDOW }
    }

    fn other(&self) -> u32 {
        if self.current == self.most { self.most - 1 } else { self.most }
    }
}

/// Steps at a count whose steps take `current` before a count whose steps take `other` is tried
/// again, so that trials take at most `TRIAL_SHARE` of the time. A trial ends once it has cost a
/// window of the current count's steps, so it costs at most that and one step more.
fn spacing(current: Duration, other: Duration) -> u32 {
    let trial = other.saturating_mul(WINDOW as u32).min(current.saturating_mul(WINDOW as u32).saturating_add(other));
    let steps = trial.as_secs_f64() / current.as_secs_f64().max(1e-9) / TRIAL_SHARE;
    steps.ceil().min(f64::from(u32::MAX)) as u32
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

    /// Total time of `steps` steps under `time`, and the counts used.
    fn timed(threads: &mut DecodeThreads, steps: usize, time: impl Fn(u32, usize) -> Duration) -> (Duration, Vec<u32>) {
        let used = run(threads, steps, &time);
        let total = used.iter().enumerate().map(|(step, &n)| time(n, step)).sum();
        (total, used)
    }

    /// Every core stalls at its barrier beside a busy core: 30× one fewer's step, as 16 threads
    /// against 15 on a 16-core machine (docs/benchmarks.md).
    fn stalled(n: u32) -> Duration {
        if n == 16 { 112 * MS } else { 4 * MS }
    }

    #[test]
    fn a_stall_present_from_the_first_token_is_left_after_three_steps() {
        let mut threads = DecodeThreads::new(16, true);
        let (total, used) = timed(&mut threads, 200, |n, _| stalled(n));
        assert!(used[..FIRST_WINDOW].iter().all(|&n| n == 16));
        let stalled_steps = used[FIRST_WINDOW..].iter().filter(|&&n| n == 16).count();
        assert!(stalled_steps <= 1, "a later trial of 16 threads ends after one step: {used:?}");
        // Three stalled steps and ~200 at 4 ms: ~1.2 s, where every core throughout takes 22 s
        // and a first trial after 48 steps 6 s.
        assert!(total < 1300 * MS, "{total:?}");
    }

    #[test]
    fn a_stall_that_starts_long_after_the_choice_settled_is_left_at_once() {
        let mut threads = DecodeThreads::new(16, true);
        // Every core 5 % faster until step 5,000 (the trials have grown rare), then a core is taken.
        let (_, used) = timed(&mut threads, 5200, |n, step| match (n, step < 5000) {
            (16, true) => 38 * MS / 10,
            (16, false) => 112 * MS,
            _ => 4 * MS,
        });
        assert_eq!(used[4999], 16);
        let stalled_steps = used[5000..].iter().filter(|&&n| n == 16).count();
        assert!(stalled_steps <= WINDOW, "{stalled_steps} steps on the stalled count");
    }

    #[test]
    fn trials_of_a_stalled_count_end_early_and_take_a_small_share_of_the_time() {
        // Step times seen on a 16-core virtual machine beside one busy core (16 threads stall at
        // every barrier) and a 2-core one.
        for (most, stalled, fewer) in [(16, 450 * MS, 2 * MS), (16, 112 * MS, 4 * MS), (2, 30 * MS, 15 * MS)] {
            let mut threads = DecodeThreads::new(most, true);
            let time = |n: u32, _| if n == most { stalled } else { fewer };
            let (total, used) = timed(&mut threads, 20_000, time);
            // The first steps are written on every core; later trials take at most ~5 %.
            let ideal = fewer * 20_000 + stalled * FIRST_WINDOW as u32;
            assert!(total < ideal * 106 / 100, "{most} threads at {stalled:?}: {total:?} against {ideal:?}");
            let trial_steps = used[2 * WINDOW..].iter().filter(|&&n| n == most).count();
            assert!(trial_steps < 20_000 / 50, "{trial_steps} steps on the stalled count");
        }
    }

    #[test]
    fn steps_timed_at_zero_or_at_absurd_lengths_neither_panic_nor_stop_the_choice() {
        // A coarse clock, a suspended machine: step times outside anything real.
        for (fast, slow) in [(Duration::ZERO, MS), (Duration::ZERO, Duration::MAX / 4), (MS, Duration::MAX / 4)] {
            let mut threads = DecodeThreads::new(4, true);
            run(&mut threads, 3000, |n, _| if n == 4 { slow } else { fast });
            assert_eq!(threads.next(), 3, "{fast:?} against {slow:?}");
        }
    }
}
