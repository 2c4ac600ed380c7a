//! How an engine process ends: its replies read until the pipe closes, its stderr kept for the
//! cause, its exit status awaited, and the supervisor told.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStderr, ChildStdout, ExitStatus};
use std::sync::{Arc, Mutex, Weak};
use std::thread;
use std::time::{Duration, Instant};

use super::Shared;
use crate::host::cause::{self, LastLines};
use crate::host::protocol::{FrameReader, FromHost};
use crate::host::timing::QUIT_WAIT;

/// What the reader needs to explain the end of its process.
pub(super) struct Exit {
    pub(super) epoch: u64,
    pub(super) child: Arc<Mutex<Child>>,
    pub(super) last_lines: Arc<Mutex<LastLines>>,
    pub(super) stderr_thread: thread::JoinHandle<()>,
}

/// Reads frames until the pipe ends, then reports the process's end.
pub(super) fn read_replies(shared: Weak<Shared>, stdout: ChildStdout, exit: Exit) {
    let mut frames = FrameReader::new(stdout);
    let broken = loop {
        match frames.read::<FromHost>() {
            Ok(Some(message)) => match shared.upgrade() {
                Some(shared) => shared.dispatch(exit.epoch, message),
                None => return,
            },
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    if let Some(e) = &broken {
        // A process that sends garbage cannot be trusted with the next request.
        tracing::error!(error = %e, "the engine process sent a bad frame; restarting it");
        let _ = exit.child.lock().expect("child poisoned").kill();
    }
    let status = wait_for_exit(&exit.child);
    let _ = exit.stderr_thread.join();
    let cause = cause::describe(status, &exit.last_lines.lock().expect("stderr lines poisoned"));
    if let Some(shared) = shared.upgrade() {
        shared.on_exit(exit.epoch, cause);
    }
}

/// The exit status once the process has ended; kills it if it closed its pipe but lingers.
fn wait_for_exit(child: &Mutex<Child>) -> Option<ExitStatus> {
    let deadline = Instant::now() + QUIT_WAIT;
    loop {
        let mut child = child.lock().expect("child poisoned");
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                return child.wait().ok();
            }
            Ok(None) => {}
            Err(_) => return None,
        }
        drop(child);
        thread::sleep(Duration::from_millis(10));
    }
}

/// Forwards the engine's stderr to the app's log and keeps its last lines for crash reports.
pub(super) fn spawn_stderr_reader(stderr: ChildStderr, last: Arc<Mutex<LastLines>>) -> std::io::Result<thread::JoinHandle<()>> {
    thread::Builder::new().name("engine-stderr".into()).spawn(move || {
        let reader = BufReader::new(stderr);
        for line in reader.split(b'\n') {
            let Ok(line) = line else { break };
            let line = String::from_utf8_lossy(&line).trim_end().to_owned();
            if line.is_empty() {
                continue;
            }
            tracing::info!(target: "engine", "{line}");
            last.lock().expect("stderr lines poisoned").push(line);
        }
    })
}
