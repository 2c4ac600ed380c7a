//! Frames from the engine process, routed to whoever waits for them: a load's progress and
//! result, a reply's events, an unload, the device report, the memory held.

use std::time::Instant;

use tokio::sync::oneshot;

use super::{Pending, Shared};
use crate::EngineError;
use crate::host::protocol::{FromHost, ToHost};

impl Shared {
    /// Routes a frame from the engine to whoever waits for it.
    pub(super) fn dispatch(&self, epoch: u64, message: FromHost) {
        let mut state = self.lock();
        match message {
            FromHost::Ready { pid } => tracing::debug!(pid, "engine process ready"),
            FromHost::Progress { id, fraction } => {
                if let Some(Pending::Load { progress: Some(progress), .. }) = state.pending.get_mut(&id) {
                    progress(fraction);
                }
            }
            FromHost::Loaded { id, result } => {
                let Some(Pending::Load { reply, path, params, cancel, .. }) = state.pending.remove(&id) else { return };
                // A cancel raised before the result arrived wins: the model is let go again.
                let result = match result.map(|info| *info) {
                    Ok(_) if cancel.is_cancelled() => {
                        let unload = self.id();
                        let (done, _) = oneshot::channel();
                        state.pending.insert(unload, Pending::Unload(done));
                        if let Some(host) = &state.host {
                            let _ = host.send(&ToHost::Unload { id: unload });
                        }
                        Err(EngineError::LoadCancelled { path: path.display().to_string() })
                    }
                    other => other,
                };
                match &result {
                    Ok(info) => {
                        state.loaded = Some(info.clone());
                        state.model = Some((path, params));
                    }
                    Err(e) => {
                        // The engine drops its model before loading another: none is loaded now.
                        tracing::warn!(error = %e, "model load failed");
                        state.loaded = None;
                        state.model = None;
                    }
                }
                if let Some(reply) = reply {
                    let _ = reply.send(result);
                }
            }
            FromHost::Event { id, event } => {
                let finished = event.is_last();
                if let Some(Pending::Reply { events, .. }) = state.pending.get(&id) {
                    let _ = events.send(event);
                }
                if finished {
                    state.pending.remove(&id);
                    state.last_used = Some(Instant::now());
                    if state.host.as_ref().is_some_and(|h| h.epoch == epoch) {
                        // A wedge ends when the engine finishes what it was stuck on.
                        let busy_with_stopped = state.pending.values().any(|p| matches!(p, Pending::Reply { cancel_sent: Some(_), .. }));
                        if !busy_with_stopped && let Some(host) = state.host.as_mut() {
                            host.wedged_since = None;
                        }
                    }
                }
            }
            FromHost::Unloaded { id } => {
                state.loaded = None;
                state.model = None;
                if let Some(Pending::Unload(done)) = state.pending.remove(&id) {
                    let _ = done.send(());
                }
            }
            FromHost::Devices { report } => state.record_devices(report),
            FromHost::Prefilled { id } => {
                if let Some(Pending::Prefill(end)) = state.pending.remove(&id) {
                    let _ = end.send(());
                }
            }
            FromHost::Embedded { id, result } => {
                if let Some(Pending::Embed { reply, .. }) = state.pending.remove(&id) {
                    let _ = reply.send(result);
                }
            }
            FromHost::Usage { id, held } => {
                if let Some(Pending::Usage(reply)) = state.pending.remove(&id) {
                    let _ = reply.send(held);
                }
            }
        }
    }
}
