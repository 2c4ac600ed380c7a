//! How often a streaming reply's text reaches the window, from what the window costs: the one
//! pacer of a stream (the window paints what arrives at its next frame; its figures reach the UI
//! through contract.json as [`FIGURES`]).
//!
//! Each hand-over costs the window CPU — the web process's script, layout and paint, and this
//! process's main thread (WebKit's UI side: the paint's copy, the IPC) — on the cores the model
//! decodes on, where llama.cpp's threads meet at a barrier after every layer: `make bench-app` on
//! 2 cores measured the engine beside the window at ~0.88 of its speed alone while the window took
//! ~0.13 of a core, and at 0.70–0.80 while hostile Markdown took it 0.2–0.35. The window itself
//! sees only its script and layout, not the paint, the garbage collector or this process. So while
//! text is handed over, the window's CPU is read from /proc about once a
//! second and the time between hand-overs set so that the window takes at most
//! `WINDOW_CPU_SHARE` of a core: never more often than `WINDOW_UPDATE_INTERVAL`, never less often
//! than `SLOWEST`. A fast machine, or a GPU that composites, stays at the fastest pace.
//!
//! Only on Linux (/proc); elsewhere the fixed pace.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hearth_core::{WINDOW_UPDATE_INTERVAL, WindowPace};

/// `fixed`: every `WINDOW_UPDATE_INTERVAL`, whatever the window costs.
pub const OVERRIDE_ENV: &str = "HEARTH_WINDOW_PACE";

/// The share of one core the window may take while a reply streams. `make bench-app` (2 cores,
/// 80–97 tok/s): at 0.08 the window got 7–9 updates a second and the engine beside it 0.88 of its
/// speed alone; at 0.06, 5.6–6.2 a second (~170 ms apart: still seen to move) and 0.98–1.03.
pub const WINDOW_CPU_SHARE: f64 = 0.06;
/// Never slower than this: the text must still be seen to move.
pub const SLOWEST: Duration = Duration::from_millis(500);

/// The pace's figures, as the window (and the browser tests' stand-in backend) reads them.
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaceFigures {
    /// Hand-overs are never closer than this (`WINDOW_UPDATE_INTERVAL`).
    pub fastest_ms: u64,
    /// Nor further apart than this.
    pub slowest_ms: u64,
    /// The share of one core the window may take while a reply streams.
    pub window_cpu_share: f64,
}

pub const FIGURES: PaceFigures = PaceFigures {
    fastest_ms: WINDOW_UPDATE_INTERVAL.as_millis() as u64,
    slowest_ms: SLOWEST.as_millis() as u64,
    window_cpu_share: WINDOW_CPU_SHARE,
};
/// How often the window's CPU is read while text is handed over.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);
/// A sample older than this many `SAMPLE_EVERY`s spans a pause between replies (typing,
/// reading): begin again.
const STALE_SAMPLES: u32 = 3;
/// Clock ticks per second of /proc's CPU times (Linux's USER_HZ).
const USER_HZ: u64 = 100;

/// The time between hand-overs for a window that costs `per_handover` of CPU each.
pub fn interval_for(per_handover: Duration) -> Duration {
    per_handover.div_f64(WINDOW_CPU_SHARE).clamp(WINDOW_UPDATE_INTERVAL, SLOWEST)
}

/// Reads the window's CPU time and paces the hand-overs by it.
pub struct MeasuredPace {
    /// The thread that runs the window's loop (GTK's: the main thread).
    window_thread: u32,
    sample_every: Duration,
    state: Mutex<State>,
}

struct State {
    /// The web processes (this process's children that WebKit started).
    web: Vec<u32>,
    last: Option<Sample>,
    handovers: u64,
    interval: Duration,
}

struct Sample {
    at: Instant,
    cpu: Duration,
    handovers: u64,
}

impl MeasuredPace {
    /// For the window whose loop runs on the main thread; `None` where its CPU cannot be read
    /// (no /proc) or `HEARTH_WINDOW_PACE=fixed` (to measure against) asks for the fixed pace.
    pub fn for_this_window() -> Option<MeasuredPace> {
        if std::env::var(OVERRIDE_ENV).is_ok_and(|v| v.trim() == "fixed") {
            return None;
        }
        Self::with(std::process::id(), SAMPLE_EVERY)
    }

    fn with(window_thread: u32, sample_every: Duration) -> Option<MeasuredPace> {
        window_cpu(window_thread, &[]).map(|_| MeasuredPace {
            window_thread,
            sample_every,
            state: Mutex::new(State { web: Vec::new(), last: None, handovers: 0, interval: WINDOW_UPDATE_INTERVAL }),
        })
    }
}

impl WindowPace for MeasuredPace {
    fn interval(&self) -> Duration {
        self.state.lock().map(|s| s.interval).unwrap_or(WINDOW_UPDATE_INTERVAL)
    }

    fn handed_over(&self) {
        let Ok(mut state) = self.state.lock() else { return };
        state.handovers += 1;
        let now = Instant::now();
        if state.last.as_ref().is_some_and(|last| now - last.at < self.sample_every) {
            return;
        }
        // The web process starts with the page: found at the first hand-over, again if it went.
        if state.web.is_empty() || !state.web.iter().all(|pid| Path::new(&format!("/proc/{pid}")).exists()) {
            state.web = web_processes();
        }
        let Some(cpu) = window_cpu(self.window_thread, &state.web) else { return };
        if let Some(last) = state.last.take()
            && now - last.at < self.sample_every * STALE_SAMPLES
            && state.handovers > last.handovers
        {
            let per_handover = cpu.saturating_sub(last.cpu) / (state.handovers - last.handovers) as u32;
            // Halfway to the new figure: one second's sample is coarse (10 ms ticks).
            let interval = (state.interval + interval_for(per_handover)) / 2;
            if interval != state.interval {
                tracing::debug!(?per_handover, ?interval, "window pace");
            }
            state.interval = interval;
        }
        state.last = Some(Sample { at: now, cpu, handovers: state.handovers });
    }
}

/// The window's CPU time so far: its loop's thread in this process and the web processes.
fn window_cpu(window_thread: u32, web: &[u32]) -> Option<Duration> {
    let pid = std::process::id();
    let mut ticks = cpu_ticks(&format!("/proc/{pid}/task/{window_thread}/stat"))?;
    for pid in web {
        ticks += cpu_ticks(&format!("/proc/{pid}/stat")).unwrap_or(0);
    }
    Some(Duration::from_millis(ticks * 1000 / USER_HZ))
}

/// utime + stime of a /proc `stat` file.
fn cpu_ticks(path: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // The command name may hold spaces and parentheses: fields are counted after its last ')'.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// This process's children that WebKit started to render pages.
fn web_processes() -> Vec<u32> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let name = stat.find('(').zip(stat.rfind(')')).map(|(a, b)| &stat[a + 1..b]).unwrap_or("");
                let parent = stat.rfind(')').and_then(|b| stat.get(b + 2..)).and_then(|rest| rest.split(' ').nth(1));
                name.starts_with("WebKitWebProces") && parent == Some(me.to_string().as_str())
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_keeps_the_window_to_its_share_between_the_bounds() {
        let ms = Duration::from_millis;
        for (per_handover, interval) in [
            (ms(0), ms(100)),
            (ms(3), ms(100)),
            (ms(6), ms(100)),
            (ms(9), ms(150)),
            (ms(15), ms(250)),
            (ms(30), ms(500)),
            (ms(400), ms(500)),
        ] {
            assert_eq!(interval_for(per_handover), interval, "{per_handover:?} a hand-over");
        }
    }

    /// The test's thread stands for the window's loop.
    fn this_thread() -> u32 {
        let link = std::fs::read_link("/proc/thread-self").expect("/proc is there on Linux");
        link.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse().ok()).expect("PID/task/TID")
    }

    /// This thread's CPU time, from the kernel's own clock for it (not /proc).
    fn thread_cpu() -> Duration {
        let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given.
        assert_eq!(unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) }, 0);
        Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
    }

    /// Spends `time` of this thread's CPU, however long that takes on a loaded machine.
    fn busy(time: Duration) {
        let start = thread_cpu();
        while thread_cpu() - start < time {
            std::hint::black_box(start);
        }
    }

    #[test]
    fn reads_this_threads_cpu_time() {
        let thread = this_thread();
        let (before, clock_before) = (window_cpu(thread, &[]).unwrap(), thread_cpu());
        busy(Duration::from_millis(300));
        let (after, clock_after) = (window_cpu(thread, &[]).unwrap(), thread_cpu());
        // /proc counts in ticks of 10 ms: within two of the thread's own clock.
        let (read, spent) = ((after - before).as_secs_f64(), (clock_after - clock_before).as_secs_f64());
        assert!((read - spent).abs() <= 0.025, "/proc says {read} s, the thread's clock {spent} s");
    }

    #[test]
    fn a_costly_window_is_paced_slower_and_a_cheap_one_at_the_fastest_pace() {
        // Samples every 200 ms instead of every second: the same rule, a shorter test.
        let pace = MeasuredPace::with(this_thread(), Duration::from_millis(200)).unwrap();
        assert_eq!(pace.interval(), WINDOW_UPDATE_INTERVAL);
        // Hand-overs that cost the window 30 ms of CPU each, at most 20 a second.
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(1_000) {
            busy(Duration::from_millis(30));
            pace.handed_over();
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(pace.interval() >= Duration::from_millis(300), "paced at {:?}", pace.interval());
        // Then cheap ones bring it back to the fastest pace.
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(1_500) {
            pace.handed_over();
            std::thread::sleep(Duration::from_millis(25));
        }
        assert!(pace.interval() <= Duration::from_millis(120), "paced at {:?}", pace.interval());
    }
}
