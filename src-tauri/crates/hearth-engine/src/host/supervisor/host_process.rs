//! One running engine process, as the supervisor holds it.

use std::process::Child;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::host::protocol::{FrameError, ToHost, encode};
use crate::host::timing::QUIT_WAIT;

/// One running engine process.
pub(super) struct Host {
    pub(super) epoch: u64,
    pub(super) pid: u32,
    pub(super) started: Instant,
    pub(super) child: Arc<Mutex<Child>>,
    /// Frames' bodies, measured (`encode`), for the writer thread.
    pub(super) frames: Sender<Vec<u8>>,
    /// Set when a stopped request outlived `WEDGED_AFTER`; the watchdog then kills the process.
    pub(super) wedged_since: Option<Instant>,
    /// The watchdog killed it: its SIGKILL is ours, not the system's.
    pub(super) killed_as_wedged: bool,
    /// A model or a reply was asked of it: it does not end at rest.
    pub(super) asked: bool,
}

impl Host {
    /// Asks the process to quit, and kills it if it has not within [`QUIT_WAIT`].
    pub(super) fn quit(&self) {
        let _ = self.send(&ToHost::Quit);
        let deadline = Instant::now() + QUIT_WAIT;
        loop {
            let exited = self.child.lock().expect("child poisoned").try_wait().map(|s| s.is_some()).unwrap_or(true);
            if exited {
                return;
            }
            if Instant::now() >= deadline {
                tracing::warn!(pid = self.pid, "the engine process did not quit in time; killing it");
                let mut child = self.child.lock().expect("child poisoned");
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Queues `message` for the engine process; one too long for a frame is refused, not sent.
    pub(super) fn send(&self, message: &ToHost) -> Result<(), FrameError> {
        let frame = encode(message)?;
        let _ = self.frames.send(frame); // If the process is dying, its reader says so.
        Ok(())
    }
}
