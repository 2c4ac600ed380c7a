//! Stop answered in bounded time, and an engine wedged on a stopped request replaced.

use std::sync::Weak;
use std::thread;
use std::time::{Duration, Instant};

use hearth_core::{FinishReason, GenEvent, ReplyStats};

use super::{Pending, Shared};
use crate::host::protocol::ToHost;
use crate::host::timing::STOP_ANSWER;

const WATCHDOG_TICK: Duration = Duration::from_millis(50);

/// Every tick: forwards Stop to the engine, answers a stopped reply itself if the engine has
/// not within [`STOP_ANSWER`], and kills an engine wedged on a stopped request.
pub(super) fn watchdog(shared: Weak<Shared>) {
    loop {
        thread::sleep(WATCHDOG_TICK);
        let Some(shared) = shared.upgrade() else { return };
        let mut state = shared.lock();
        if state.shutting_down {
            return;
        }
        let now = Instant::now();
        let mut cancels = Vec::new();
        let mut answered = Vec::new();
        for (id, pending) in &mut state.pending {
            if let Pending::Load { cancel, cancel_sent, .. } = pending {
                if cancel.is_cancelled() && !*cancel_sent {
                    *cancel_sent = true;
                    cancels.push(*id);
                }
                continue;
            }
            let Pending::Reply { events, cancel, cancel_sent } = pending else { continue };
            if cancel.is_cancelled() || events.is_closed() {
                match cancel_sent {
                    None => {
                        *cancel_sent = Some(now);
                        cancels.push(*id);
                    }
                    Some(sent) if now - *sent >= STOP_ANSWER => answered.push(*id),
                    Some(_) => {}
                }
            }
        }
        for id in answered {
            if let Some(Pending::Reply { events, .. }) = state.pending.remove(&id) {
                tracing::warn!(id, "the engine did not stop within a second; the reply ends here");
                let _ = events.send(GenEvent::Finished { reason: FinishReason::Cancelled, stats: ReplyStats::default() });
            }
            if let Some(host) = state.host.as_mut() {
                host.wedged_since.get_or_insert(now);
            }
        }
        if state.host.is_none() && state.crashes.due(now) {
            shared.restart(&mut state); // The wait after crashes in a row is over.
        }
        if let Some(resting) = shared.take_resting(&mut state, now) {
            tracing::info!(pid = resting.pid, "no model was asked for: the engine process ends until one is");
            drop(state);
            let _ = thread::Builder::new().name("engine-rest".into()).spawn(move || resting.quit());
            continue;
        }
        let Some(host) = state.host.as_mut() else { continue };
        for id in cancels {
            let _ = host.send(&ToHost::Cancel { id });
        }
        if !host.killed_as_wedged && host.wedged_since.is_some_and(|since| now - since >= shared.program.wedged_after) {
            tracing::error!(pid = host.pid, "the engine is stuck on a stopped request; restarting it");
            host.killed_as_wedged = true;
            let _ = host.child.lock().expect("child poisoned").kill();
        }
    }
}
