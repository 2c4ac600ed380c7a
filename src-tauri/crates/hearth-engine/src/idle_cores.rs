//! Idle time of the cores this process may run on, as the kernel counts it (`/proc/stat`): how the
//! decode thread chooser sees whether a core is free for one more thread before it tries one.

use std::time::{Duration, Instant};

/// The kernel's idle time summed over this process's cores, as read at `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IdleTime {
    pub at: Instant,
    pub idle: Duration,
}

/// Reads it now; `None` where the kernel does not tell (not Linux, no `/proc`).
pub(crate) fn read() -> Option<IdleTime> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let at = Instant::now();
    let allowed = affinity();
    let idle = idle_ticks(&stat, |cpu| allowed.as_ref().is_none_or(|cpus| cpus.contains(&cpu)))?;
    Some(IdleTime { at, idle: Duration::from_millis(idle.saturating_mul(1000) / ticks_per_second()) })
}

/// Idle and I/O-wait ticks summed over the `cpuN` lines of `/proc/stat` whose N `keep` accepts.
fn idle_ticks(stat: &str, keep: impl Fn(usize) -> bool) -> Option<u64> {
    let mut ticks = None;
    for line in stat.lines() {
        let mut fields = line.split_whitespace();
        // "cpu" alone is the machine's total; "cpu3" one core.
        let Some(Ok(cpu)) = fields.next().and_then(|name| name.strip_prefix("cpu")).map(str::parse::<usize>) else {
            continue;
        };
        if !keep(cpu) {
            continue;
        }
        // user nice system idle iowait …
        let counts: Vec<u64> = fields.take(5).map_while(|f| f.parse().ok()).collect();
        if let [_, _, _, idle, iowait] = counts[..] {
            ticks = Some(ticks.unwrap_or(0) + idle + iowait);
        }
    }
    ticks
}

/// The CPUs this process may run on (`taskset`, cgroups' cpusets), where the kernel says.
#[cfg(target_os = "linux")]
fn affinity() -> Option<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, filled by the kernel for this process.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some((0..libc::CPU_SETSIZE as usize).filter(|&cpu| libc::CPU_ISSET(cpu, &set)).collect())
    }
}

#[cfg(not(target_os = "linux"))]
fn affinity() -> Option<Vec<usize>> {
    None
}

#[cfg(target_os = "linux")]
fn ticks_per_second() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { hz as u64 } else { 100 }
}

#[cfg(not(target_os = "linux"))]
fn ticks_per_second() -> u64 {
    100
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  3485000 378563 406207 1000768 15265 0 5798 17102 0 0
cpu0 1714044 186402 198844 540601 3593 0 2177 8410 0 0
cpu1 1770955 192161 207362 460167 11672 0 3620 8692 0 0
intr 1 2 3
ctxt 99
";

    #[test]
    fn idle_and_iowait_ticks_of_the_cores_asked_for() {
        let cases: [(&[usize], Option<u64>); 4] = [
            (&[0, 1], Some(540_601 + 3_593 + 460_167 + 11_672)),
            (&[1], Some(460_167 + 11_672)),
            // The total line is never taken for a core.
            (&[], None),
            (&[7], None),
        ];
        for (cpus, want) in cases {
            assert_eq!(idle_ticks(STAT, |cpu| cpus.contains(&cpu)), want, "{cpus:?}");
        }
        assert_eq!(idle_ticks("cpu0 1 2\ngarbage", |_| true), None, "a short line is skipped");
    }

    #[test]
    fn this_machine_tells_and_idle_time_only_grows() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let first = read().expect("/proc/stat on Linux");
        std::thread::sleep(Duration::from_millis(30));
        let second = read().expect("/proc/stat on Linux");
        assert!(second.at > first.at && second.idle >= first.idle, "{first:?} then {second:?}");
    }
}
