//! A stdio server's process: started in its own process group (so `npx`'s children go with it),
//! its stderr kept for the words of a failure, its stdout read line by line so that what is not
//! JSON-RPC is set aside and told, not fed to the protocol, and its end noticed.

use std::collections::BTreeMap;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_core::LastLines;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::watch;

/// The longest line a server may write on stdout: a message, not a stream of bytes without end.
const MAX_LINE: usize = 32 << 20;
/// How long a server has to end once its stdin is closed, and again after SIGTERM.
const QUIT_WAIT: Duration = Duration::from_secs(2);
/// How long a server has to end at quit before SIGKILL.
const KILL_GRACE: Duration = Duration::from_millis(200);
/// How long stderr is read after the process ended.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// What the process left to tell: its stderr's last lines and the first lines of stdout that
/// were not JSON-RPC.
#[derive(Debug, Default, Clone)]
pub struct Leftovers {
    pub stderr: LastLines,
    pub garbage: LastLines,
}

/// A started server process: the two ends rmcp speaks through, and what watches it.
pub struct Process {
    pid: u32,
    pub reader: DuplexStream,
    pub writer: ChildStdin,
    pub leftovers: Arc<Mutex<Leftovers>>,
    /// Set once the process has ended, to how it ended.
    pub ended: watch::Receiver<Option<ExitStatus>>,
    stop: Arc<tokio::sync::Notify>,
}

/// Starts `command` with `args`, `env` added to Hearth's environment, in `cwd`.
pub fn spawn(command: &str, args: &[String], env: &BTreeMap<String, String>, cwd: Option<&str>) -> std::io::Result<Process> {
    let mut cmd = Command::new(command);
    cmd.args(args).envs(env).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).kill_on_drop(true);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    let mut child = cmd.spawn()?;
    let pid = child.id().unwrap_or_default();
    let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take()) else {
        return Err(std::io::Error::other("the server's pipes were not opened"));
    };
    let leftovers = Arc::new(Mutex::new(Leftovers::default()));

    let kept = leftovers.clone();
    let stderr_read = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!(target: "hearth_mcp::stderr", pid, "{line}");
            kept.lock().expect("leftovers poisoned").stderr.push(line);
        }
    });

    let (reader, mut feed) = tokio::io::duplex(1 << 16);
    let kept = leftovers.clone();
    tokio::spawn(async move {
        let mut stdout = BufReader::new(stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_line(&mut stdout, &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if is_json_rpc(&line) {
                if feed.write_all(&line).await.is_err() || feed.write_all(b"\n").await.is_err() {
                    break;
                }
            } else if !line.iter().all(u8::is_ascii_whitespace) {
                let text = String::from_utf8_lossy(&line[..line.len().min(400)]).trim_end().to_owned();
                tracing::warn!(pid, "an MCP server wrote something that is not JSON-RPC on stdout: {text}");
                kept.lock().expect("leftovers poisoned").garbage.push(text);
            }
        }
        let _ = feed.shutdown().await;
    });

    let (ended_tx, ended) = watch::channel(None);
    let stop = Arc::new(tokio::sync::Notify::new());
    tokio::spawn(watch_child(child, pid, stderr_read, ended_tx, stop.clone()));
    Ok(Process { pid, reader, writer: stdin, leftovers, ended, stop })
}

impl Process {
    /// The handle that ends the process: see [`Stopper::stop`].
    pub fn stopper(&self) -> Stopper {
        Stopper { stop: self.stop.clone(), ended: self.ended.clone(), pid: self.pid }
    }
}

/// Ends a server process the way the MCP specification asks: its stdin closes (the client's end
/// of the session), then SIGTERM to its group, then SIGKILL.
#[derive(Clone)]
pub struct Stopper {
    stop: Arc<tokio::sync::Notify>,
    ended: watch::Receiver<Option<ExitStatus>>,
    pid: u32,
}

impl Stopper {
    /// Asks the watcher to end the process, and waits until it has.
    pub async fn stop(&self) {
        self.stop.notify_one();
        let mut ended = self.ended.clone();
        let _ = ended.wait_for(Option::is_some).await;
    }

    /// Ends the process group now, without an async runtime (at quit, on whatever thread the app
    /// exits from): SIGTERM, a moment to finish, then SIGKILL.
    pub fn kill_now(&self) {
        if self.ended.borrow().is_some() {
            return;
        }
        signal_group(self.pid, libc::SIGTERM);
        std::thread::sleep(KILL_GRACE);
        signal_group(self.pid, libc::SIGKILL);
    }
}

async fn watch_child(
    mut child: Child,
    pid: u32,
    stderr_read: tokio::task::JoinHandle<()>,
    ended: watch::Sender<Option<ExitStatus>>,
    stop: Arc<tokio::sync::Notify>,
) {
    let status = tokio::select! {
        status = child.wait() => status.ok(),
        () = stop.notified() => {
            // rmcp's transport holds stdin; it closes it when the service ends, which the caller
            // has done. Give the server its time, then signal its whole group.
            match tokio::time::timeout(QUIT_WAIT, child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => {
                    signal_group(pid, libc::SIGTERM);
                    match tokio::time::timeout(QUIT_WAIT, child.wait()).await {
                        Ok(status) => status.ok(),
                        Err(_) => {
                            signal_group(pid, libc::SIGKILL);
                            child.wait().await.ok()
                        }
                    }
                }
            }
        }
    };
    // Whatever it started is ended with it: a server's helpers must not outlive it.
    signal_group(pid, libc::SIGKILL);
    // Its last words are read before its end is told (a helper holding stderr open is not waited for).
    let _ = tokio::time::timeout(STDERR_DRAIN, stderr_read).await;
    let _ = ended.send(Some(status.unwrap_or_else(|| std::os::unix::process::ExitStatusExt::from_raw(0))));
}

fn signal_group(pid: u32, signal: i32) {
    if pid == 0 {
        return;
    }
    // SAFETY: killpg only sends a signal; the group is the one the child leads (process_group(0)).
    unsafe {
        libc::killpg(pid as libc::pid_t, signal);
    }
}

/// Reads one line (without its `\n`), refusing lines past [`MAX_LINE`].
async fn read_line(stdout: &mut BufReader<tokio::process::ChildStdout>, line: &mut Vec<u8>) -> std::io::Result<usize> {
    let read = stdout.read_until(b'\n', line).await?;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.len() > MAX_LINE {
        return Err(std::io::Error::other("a line too long"));
    }
    Ok(read)
}

/// A line rmcp can read: a JSON object (a message) or array (a batch).
fn is_json_rpc(line: &[u8]) -> bool {
    let trimmed = line.trim_ascii();
    matches!(trimmed.first(), Some(b'{' | b'[')) && serde_json::from_slice::<serde::de::IgnoredAny>(trimmed).is_ok()
}

/// How a server's end reads: "it exited with status 1", "it was killed by signal 9".
pub fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("it exited with status {code}"),
        (None, Some(signal)) => format!("it was ended by signal {signal}"),
        (None, None) => "it ended".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_json_rpc_from_garbage() {
        for (line, expected) in [
            (&br#"{"jsonrpc":"2.0","id":1,"result":{}}"#[..], true),
            (br#"  [{"jsonrpc":"2.0","method":"x"}]"#, true),
            (b"Server listening on stdio", false),
            (b"{not json", false),
            (b"", false),
        ] {
            assert_eq!(is_json_rpc(line), expected, "{}", String::from_utf8_lossy(line));
        }
    }
}
