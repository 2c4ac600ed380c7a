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
//! A stalled barrier can cost far more than a share of a core. On a 16-core virtual machine beside
//! one spinning core, 16 threads wrote 9 tok/s where 15 wrote 268, and on 2–8 of its cores a step
//! on every core took 3 s against 4–20 ms on one fewer (docs/benchmarks.md): one such step costs
//! what hundreds of the other's do, so timing a trial step is already too dear. Writing starts on
//! one fewer, and every core is tried only when the kernel's idle time says the core it adds is
//! free (`crate::idle_cores`): another program that keeps part of that core busy means no trial
//! until it stops. On every core, two steps in a row far slower than when chosen (another program
//! started) put one fewer on trial at once. Trials are spaced by what they cost (at most 5 % of the time).
//! Prompts read on one fewer too while the last reading saw that core taken.

use std::time::Duration;

use crate::idle_cores::IdleTime;

/// Token times compared per count: the median of this many steps.
const WINDOW: usize = 8;
/// … and for the first choice, made as soon as writing starts.
const FIRST_WINDOW: usize = 3;
/// Steps at the current count before the other is tried again, after the first trial; doubled
/// each time the trial confirms the current count (up to `MAX_PERIOD`), so a settled choice costs
/// little.
const FIRST_PERIOD: u32 = 48;
const MAX_PERIOD: u32 = 768;
/// The other count must be this much faster to take over (step times are noisy).
const MARGIN: f64 = 0.04;
/// Trials may take at most this share of the time spent writing.
const TRIAL_SHARE: f64 = 0.05;
/// The current count's steps this much slower than when it was chosen or last confirmed: the
/// machine changed (another program took a core), so one fewer is tried at once.
const SLOWDOWN: f64 = 1.5;
/// Two steps in a row of every core this much slower than when chosen are enough to try one fewer:
/// a stall at the barriers costs seconds a step where one fewer takes milliseconds (190–750× on
/// the 16-core VM). The window's own bursts (a list nested 200 deep laid out) hold up one step
/// 2–40× now and then: taken for stalls, they kept moving writing to one thread, where two wrote
/// faster overall (docs/benchmarks.md).
const SPIKE: f64 = 10.0;
/// Steps on one fewer timed together before the kernel's idle time is read: its clock counts in
/// hundredths of a second.
const SPAN: Duration = Duration::from_millis(100);
/// Idle cores, while writing on one fewer, that make the core every core adds free for it.
const FREE_CORE: f64 = 0.5;

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
    /// The other count while it is tried.
    trial: Option<Trial>,
    since_trial: u32,
    period: u32,
    /// Steps on one fewer being timed against the kernel's idle time.
    span: Option<Span>,
    /// Whether the core every core adds is free.
    spare: Spare,
}

#[derive(Debug, Clone)]
struct Trial {
    steps: Vec<Duration>,
    /// The current count's step time the trial is compared with.
    against: Duration,
    cause: Cause,
}

/// Why a trial started.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cause {
    /// The period came round, or the steps slowed down.
    Timing,
    /// Every core stalled.
    Stall,
}

#[derive(Debug, Clone)]
struct Span {
    start: IdleTime,
    /// Time of the steps decoded since `start`.
    steps: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Spare {
    /// Not read since writing moved to one fewer.
    Unknown,
    /// The kernel does not tell: trials go by timing alone.
    Untold,
    /// Idle cores seen while writing on one fewer.
    Seen(f64),
}

impl DecodeThreads {
    /// Tuned between `most` and one fewer; fixed at `most` when `tuned` is false (the user chose a
    /// count) or there is no fewer.
    pub fn new(most: u32, tuned: bool) -> Self {
        let most = most.max(1);
        let tuned = tuned && most >= 2;
        DecodeThreads {
            most,
            tuned,
            current: if tuned { most - 1 } else { most },
            recent: Vec::with_capacity(WINDOW),
            settled: None,
            trial: None,
            since_trial: 0,
            period: FIRST_PERIOD,
            span: None,
            spare: Spare::Unknown,
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

    /// The count a prompt or batch should read on: one fewer while the last reading saw the core
    /// every core adds taken by another program, else every core.
    pub fn batch(&self) -> u32 {
        match self.spare {
            Spare::Seen(idle) if self.tuned && idle < FREE_CORE => self.most - 1,
            _ => self.most,
        }
    }

    /// A one-token step run with [`DecodeThreads::next`] took `elapsed`; `idle` reads the
    /// kernel's idle time (called now and then, on one fewer).
    pub fn record(&mut self, elapsed: Duration, idle: impl FnOnce() -> Option<IdleTime>) {
        if !self.tuned {
            return;
        }
        self.time_spare(elapsed, idle);
        let window = self.window();
        if let Some(trial) = self.trial.as_mut() {
            trial.steps.push(elapsed);
            let kept = trial.against;
            let cause = trial.cause;
            let spent: Duration = trial.steps.iter().sum();
            let done = trial.steps.len() == window;
            if done || spent > kept.saturating_mul(window as u32) {
                // Cut short, the other count lost: its steps so far cost more than a window of ours.
                let tried = if done { median(&trial.steps) } else { spent / trial.steps.len() as u32 };
                self.trial = None;
                self.since_trial = 0;
                if done && tried.as_secs_f64() < kept.as_secs_f64() * (1.0 - MARGIN) {
                    tracing::debug!(from = self.current, to = self.other(), ?kept, ?tried, "decode threads changed");
                    self.switch();
                    self.settled = Some(tried);
                    // After a stall, the stalled steps are no measure of every core once the other
                    // program is gone: every core is tried soon, when the idle time shows its core
                    // free.
                    self.period = if cause == Cause::Stall { FIRST_PERIOD } else { FIRST_PERIOD.max(spacing(tried, kept)) };
                } else {
                    tracing::trace!(kept_threads = self.current, ?kept, ?tried, done, "decode threads kept");
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
        // Only every core stalls when another program takes a core; one fewer slowing down says
        // nothing about every core, which is tried on the period alone.
        let on_most = self.current == self.most;
        let spiked = |step: &Duration| self.settled.is_some_and(|settled| step.as_secs_f64() > settled.as_secs_f64() * SPIKE);
        // Two stalled steps in a row: a stall that lasts (every step seconds on the 16-core VM).
        // One alone is a preemption (the window laying out a huge list, 200–800 ms every few
        // seconds on 2 cores), which one thread fewer would not have been spared either.
        if on_most && self.recent.len() >= 2 && self.recent[self.recent.len() - 2..].iter().all(spiked) {
            tracing::debug!(threads = self.current, ?elapsed, "decode steps stalled: trying one thread fewer");
            // Against what the last steps took on average, the stalled ones included.
            self.start_trial(mean(&self.recent), Cause::Stall);
            return;
        }
        if self.recent.len() < window {
            return;
        }
        let kept = median(&self.recent);
        let slowed = on_most && self.settled.is_some_and(|settled| kept.as_secs_f64() > settled.as_secs_f64() * SLOWDOWN);
        let due = self.settled.is_none() || slowed || self.since_trial >= self.period;
        if due && (on_most || self.core_free()) {
            if slowed {
                tracing::debug!(threads = self.current, "decode steps slowed down: trying one thread fewer");
            }
            self.start_trial(kept, Cause::Timing);
        }
    }

    fn start_trial(&mut self, against: Duration, cause: Cause) {
        tracing::trace!(from = self.current, to = self.other(), ?against, ?cause, "trying the other decode thread count");
        self.trial = Some(Trial { steps: Vec::with_capacity(WINDOW), against, cause });
    }

    fn switch(&mut self) {
        self.current = self.other();
        self.recent.clear();
        if self.current < self.most && self.spare != Spare::Untold {
            // Whatever was read before says nothing of the program that made every core slow.
            self.spare = Spare::Unknown;
        }
    }

    /// Whether the core every core adds was free when last read (or the kernel does not tell).
    fn core_free(&self) -> bool {
        match self.spare {
            Spare::Untold => true,
            Spare::Unknown => false,
            Spare::Seen(idle) => idle >= FREE_CORE,
        }
    }

    /// Times steps on one fewer against the kernel's idle time, a `SPAN` of them at a time.
    fn time_spare(&mut self, elapsed: Duration, idle: impl FnOnce() -> Option<IdleTime>) {
        if self.next() != self.most - 1 || self.spare == Spare::Untold {
            self.span = None;
            return;
        }
        let Some(span) = self.span.as_mut() else {
            match idle() {
                Some(start) => self.span = Some(Span { start, steps: Duration::ZERO }),
                None => self.spare = Spare::Untold,
            }
            return;
        };
        span.steps = span.steps.saturating_add(elapsed);
        if span.steps < SPAN {
            return;
        }
        let Some(now) = idle() else {
            self.spare = Spare::Untold;
            self.span = None;
            return;
        };
        let wall = now.at.saturating_duration_since(span.start.at);
        // A span that waited between replies (the engine idle too) says nothing of the others.
        if wall <= span.steps.saturating_mul(2).saturating_add(SPAN / 5) && !wall.is_zero() {
            let idle_cores = now.idle.saturating_sub(span.start.idle).as_secs_f64() / wall.as_secs_f64();
            tracing::trace!(idle_cores, ?wall, "idle cores beside one thread fewer");
            self.spare = Spare::Seen(idle_cores);
        }
        *span = Span { start: now, steps: Duration::ZERO };
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

fn mean(times: &[Duration]) -> Duration {
    times.iter().sum::<Duration>() / times.len().max(1) as u32
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Runs `steps` one-token steps on a machine of `threads.most()` cores whose step time depends
    /// on the thread count; another program keeps `others(step)` cores busy, and the kernel counts
    /// as idle what neither uses. Returns the counts used.
    fn run_beside(
        threads: &mut DecodeThreads,
        steps: usize,
        time: impl Fn(u32, usize) -> Duration,
        others: impl Fn(usize) -> f64,
    ) -> Vec<u32> {
        let cores = f64::from(threads.most());
        let start = Instant::now();
        let (mut wall, mut idle) = (Duration::ZERO, Duration::ZERO);
        (0..steps)
            .map(|step| {
                let n = threads.next();
                let elapsed = time(n, step);
                wall += elapsed;
                idle += elapsed.mul_f64((cores - f64::from(n) - others(step)).max(0.0));
                let reading = IdleTime { at: start + wall, idle };
                threads.record(elapsed, || Some(reading));
                n
            })
            .collect()
    }

    /// The same where nothing else runs.
    fn run(threads: &mut DecodeThreads, steps: usize, time: impl Fn(u32, usize) -> Duration) -> Vec<u32> {
        run_beside(threads, steps, time, |_| 0.0)
    }

    /// The same where the kernel does not tell its idle time: trials go by timing alone.
    fn run_untold(threads: &mut DecodeThreads, steps: usize, time: impl Fn(u32, usize) -> Duration) -> Vec<u32> {
        (0..steps)
            .map(|step| {
                let n = threads.next();
                threads.record(time(n, step), || None);
                n
            })
            .collect()
    }

    fn total(used: &[u32], time: impl Fn(u32, usize) -> Duration) -> Duration {
        used.iter().enumerate().map(|(step, &n)| time(n, step)).sum()
    }

    #[test]
    fn keeps_every_core_while_it_is_faster_and_tries_the_other_ever_more_rarely() {
        let mut threads = DecodeThreads::new(4, true);
        let used = run(&mut threads, 4000, |n, _| if n == 4 { 8 * MS } else { 11 * MS });
        let fewer = used.iter().filter(|&&n| n == 3).count();
        assert_eq!(threads.next(), 4);
        assert!(used[..20].contains(&4), "every core is tried once the idle core is seen: {:?}", &used[..20]);
        assert!(fewer * 100 / used.len() < 3, "trials cost little once settled: {fewer} of {} steps", used.len());
    }

    #[test]
    fn moves_to_one_fewer_when_a_core_is_taken_and_back_when_it_is_free_again() {
        let mut threads = DecodeThreads::new(2, true);
        // Another program takes most of a core from step 200 to 1200: two threads stall at the barrier.
        let busy = |step: usize| (200..1200).contains(&step);
        let used = run_beside(
            &mut threads,
            2000,
            |n, step| match (n, busy(step)) {
                (2, false) => 7 * MS,
                (2, true) => 10 * MS,
                (_, _) => 8 * MS,
            },
            |step| if busy(step) { 0.6 } else { 0.0 },
        );
        assert_eq!(used[100], 2);
        assert_eq!(used[1100], 1, "one thread fewer while the core is taken");
        let back = used[1200..].iter().position(|&n| n == 2).expect("every core again");
        assert!(back < 30, "every core is tried once the core is seen free: {back} steps after");
        assert_eq!(used[1999], 2);
    }

    #[test]
    fn noise_within_the_margin_changes_nothing() {
        let mut threads = DecodeThreads::new(2, true);
        let used = run(&mut threads, 1000, |n, step| if n == 2 { 10 * MS } else { (98 + (step % 3) as u32) * MS / 10 });
        assert!(used.iter().rev().take(100).filter(|&&n| n == 1).count() > 90);
    }

    #[test]
    fn a_count_the_user_chose_or_a_single_core_is_never_changed() {
        for mut threads in [DecodeThreads::new(4, false), DecodeThreads::new(1, true)] {
            let most = threads.next();
            let used = run(&mut threads, 1000, |n, _| if n == most { 50 * MS } else { MS });
            assert!(used.iter().all(|&n| n == most));
            assert_eq!(threads.batch(), most);
        }
    }

    /// A step on every core beside a busy core on a 16-core virtual machine: 3 s at its
    /// barriers, where one fewer takes 4 ms (docs/benchmarks.md).
    fn stalled(n: u32) -> Duration {
        if n == 16 { 3000 * MS } else { 4 * MS }
    }

    #[test]
    fn a_core_taken_from_the_first_token_is_never_written_on_and_prompts_leave_it() {
        let mut threads = DecodeThreads::new(16, true);
        assert_eq!(threads.batch(), 16, "nothing read yet: prompts on every core");
        let used = run_beside(&mut threads, 2000, |n, _| stalled(n), |_| 1.0);
        assert!(used.iter().all(|&n| n == 15), "not one step on the stalled count");
        assert_eq!(threads.batch(), 15, "prompts read on one fewer while the core is taken");
    }

    #[test]
    fn a_program_that_leaves_gives_its_core_back_within_a_tenth_of_a_second() {
        let mut threads = DecodeThreads::new(16, true);
        let leaves = 500;
        let time = |n: u32, step: usize| {
            if step < leaves {
                stalled(n)
            } else if n == 16 {
                3 * MS
            } else {
                4 * MS
            }
        };
        let used = run_beside(&mut threads, 1000, time, |step| if step < leaves { 1.0 } else { 0.0 });
        assert!(used[..leaves].iter().all(|&n| n == 15));
        let back = used[leaves..].iter().position(|&n| n == 16).expect("every core again");
        assert!(back <= 2 * SPAN.as_millis() as usize / 4, "{back} steps of 4 ms");
        assert_eq!((threads.next(), threads.batch()), (16, 16));
    }

    #[test]
    fn a_stall_that_starts_long_after_the_choice_settled_is_left_at_once() {
        let mut threads = DecodeThreads::new(16, true);
        // Every core 5 % faster until step 5,000 (the trials have grown rare), then a core is taken.
        let time = |n: u32, step: usize| match (n, step < 5000) {
            (16, true) => 38 * MS / 10,
            (16, false) => 112 * MS,
            _ => 4 * MS,
        };
        let used = run_beside(&mut threads, 5400, time, |step| if step < 5000 { 0.0 } else { 1.0 });
        assert_eq!(used[4999], 16);
        let stalled_steps = used[5000..].iter().filter(|&&n| n == 16).count();
        assert_eq!(stalled_steps, 2, "two stalled steps, then one fewer and no trial while the core is taken");
    }

    #[test]
    fn the_windows_bursts_now_and_then_leave_writing_on_every_core() {
        // Traced beside the window streaming a list nested 200 deep (2 cores): two threads 19 ms a
        // step and one 34; every few seconds one step of two threads is held up 224–813 ms while
        // the window lays the list out; the idle time on one thread shows 0.4–0.95 of a core free.
        let bursts = [224, 394, 813];
        let burst = |step: usize| (step % 300 == 299).then(|| bursts[step / 300 % bursts.len()] * MS);
        let time = |n: u32, step: usize| match (n, burst(step)) {
            (2, Some(held)) => held,
            (2, None) => 19 * MS,
            _ => 34 * MS,
        };
        let mut threads = DecodeThreads::new(2, true);
        let used = run_beside(&mut threads, 3000, time, |step| if step % 7 == 0 { 0.6 } else { 0.2 });
        let fewer = used.iter().filter(|&&n| n == 1).count();
        assert!(fewer < 150, "{fewer} of 3,000 steps on one thread");
        let on_two: Duration = (0..3000).map(|step| time(2, step)).sum();
        assert!(total(&used, time) < on_two * 105 / 100);
    }

    #[test]
    fn one_long_preemption_of_every_core_is_not_a_stall() {
        // The window lays out a list nested 200 deep: one step on every core takes 60 ms where they
        // take 10, and one thread fewer 16 (2 cores).
        let mut threads = DecodeThreads::new(2, true);
        let time = |n: u32, step: usize| match (n, step % 400 == 399) {
            (2, true) => 60 * MS,
            (2, false) => 10 * MS,
            _ => 16 * MS,
        };
        let used = run(&mut threads, 4000, time);
        let fewer = used[400..].iter().filter(|&&n| n == 1).count();
        assert!(fewer < 200, "{fewer} of 3,600 steps on one thread");
        assert_eq!(threads.next(), 2);
    }

    #[test]
    fn where_the_kernel_does_not_tell_trials_of_a_stalled_count_end_early_and_take_a_small_share() {
        // Step times seen on a 16-core virtual machine beside one busy core and a 2-core one.
        for (most, stalled, fewer) in [(16, 3000 * MS, 4 * MS), (16, 450 * MS, 2 * MS), (2, 30 * MS, 15 * MS)] {
            let mut threads = DecodeThreads::new(most, true);
            let time = |n: u32, _| if n == most { stalled } else { fewer };
            let used = run_untold(&mut threads, 20_000, time);
            let ideal = fewer * 20_000 + stalled;
            let spent = total(&used, time);
            assert!(spent < ideal * 106 / 100, "{most} threads at {stalled:?}: {spent:?} against {ideal:?}");
            assert!(used[..FIRST_WINDOW].iter().all(|&n| n == most - 1), "writing starts on one fewer");
        }
    }

    #[test]
    fn steps_timed_at_zero_or_at_absurd_lengths_neither_panic_nor_stop_the_choice() {
        // A coarse clock, a suspended machine: step times outside anything real.
        for (fast, slow) in [(Duration::ZERO, MS), (Duration::ZERO, Duration::MAX / 4), (MS, Duration::MAX / 4)] {
            let mut threads = DecodeThreads::new(4, true);
            run_untold(&mut threads, 3000, |n, _| if n == 4 { slow } else { fast });
            assert_eq!(threads.next(), 3, "{fast:?} against {slow:?}");
            let mut threads = DecodeThreads::new(4, true);
            run(&mut threads, 3000, |n, _| if n == 4 { slow.min(Duration::from_secs(3600)) } else { fast });
            assert_eq!(threads.next(), 3, "{fast:?} against {slow:?}, idle time told");
        }
    }
}
