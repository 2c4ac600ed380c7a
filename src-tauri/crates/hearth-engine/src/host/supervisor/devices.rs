//! The engine process's compute devices, as it reports them once its backends are loaded, and
//! the CPU taking over from GPU backends that killed the process loading them.

use tokio::sync::oneshot;

use hearth_core::{BackendProblem, DeviceReport};

use super::State;
use crate::Engine;

impl Engine {
    /// The compute devices the engine process found (starting one if none runs), and the
    /// backends it could not use.
    pub async fn devices(&self) -> DeviceReport {
        let answer = {
            let mut state = self.shared.lock();
            if let Some(report) = &state.devices {
                return report.clone();
            }
            if let Err(e) = self.shared.ensure_host(&mut state) {
                return DeviceReport {
                    problems: vec![BackendProblem { module: "engine".into(), reason: e.to_string() }],
                    ..DeviceReport::default()
                };
            }
            let (waiter, answer) = oneshot::channel();
            state.device_waiters.push(waiter);
            answer
        };
        answer.await.unwrap_or_default()
    }
}

impl State {
    /// A process's report: the waiting callers get it, later ones find it.
    pub(super) fn record_devices(&mut self, mut report: DeviceReport) {
        if let Some(cause) = &self.gpu_off {
            report.problems.push(BackendProblem {
                module: "GPU backends".into(),
                reason: format!("turned off after the engine died loading them ({cause}); the CPU took over"),
            });
        }
        for waiter in self.device_waiters.drain(..) {
            let _ = waiter.send(report.clone());
        }
        self.devices = Some(report);
    }

    /// The process died of `cause`: before its report, it died loading its backends. The next
    /// one starts with the CPU alone; if that one dies too, the callers hear why.
    pub(super) fn died_before_devices(&mut self, cause: &str) {
        if self.devices.is_some() {
            return;
        }
        if self.gpu_off.is_none() {
            tracing::error!(%cause, "the engine died loading its compute backends; GPU backends are turned off");
            self.gpu_off = Some(cause.to_owned());
            return;
        }
        let report = DeviceReport {
            problems: vec![BackendProblem { module: "libggml-cpu.so".into(), reason: format!("the engine died loading it: {cause}") }],
            ..DeviceReport::default()
        };
        for waiter in self.device_waiters.drain(..) {
            let _ = waiter.send(report.clone());
        }
    }
}
