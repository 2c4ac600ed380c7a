//! llama.cpp's own server (`llama-server`) as the bench's peer: started on 127.0.0.1 with the
//! same model, threads and context, and spoken to over its OpenAI-compatible streaming API.
//! Every server the bench starts keeps its output's last lines, so a failed request says what the
//! server said last instead of only that the connection broke.

use std::collections::VecDeque;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

/// Lines of a server's output kept for its errors.
const TAIL_LINES: usize = 40;
/// A kept line's length at most (a server may print a whole prompt on one line).
const LINE_CHARS: usize = 400;
/// How long a failure waits for the output of a server that has exited to be read to its end.
const EXIT_OUTPUT_WAIT: Duration = Duration::from_millis(500);
/// An error reply's body kept in the error.
const BODY_CHARS: usize = 1000;

/// A server the bench talks to failed: which one, which request, what came back, and the last
/// lines it printed.
#[derive(Debug, Serialize)]
pub struct PeerError {
    pub server: String,
    /// E.g. `POST http://127.0.0.1:41234/v1/chat/completions`; absent when it failed to start.
    pub request: Option<String>,
    /// The HTTP status, when one came back.
    pub status: Option<u16>,
    /// The connection error (with its causes) or the reply's body, and whether the server exited.
    pub error: String,
    pub server_log: Vec<String>,
}

impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.server)?;
        if let Some(request) = &self.request {
            write!(f, ", {request}")?;
        }
        if let Some(status) = self.status {
            write!(f, ", status {status}")?;
        }
        write!(f, ": {}", self.error)
    }
}

impl std::error::Error for PeerError {}

/// One request that failed, before it is known which server it went to.
#[derive(Debug)]
pub struct RequestError {
    pub request: String,
    pub status: Option<u16>,
    pub error: String,
}

/// A server process, killed on drop, with the last lines of its stdout and stderr.
pub struct ServerProcess {
    name: String,
    child: Mutex<Child>,
    tail: Arc<Mutex<VecDeque<String>>>,
    readers: Vec<JoinHandle<()>>,
}

impl ServerProcess {
    /// Starts `command` with its output captured; `name` says which server it is in errors.
    pub fn spawn(name: impl Into<String>, mut command: Command) -> Result<ServerProcess, PeerError> {
        let name = name.into();
        let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| PeerError {
            server: name.clone(),
            request: None,
            status: None,
            error: format!("cannot start it: {e}"),
            server_log: Vec::new(),
        })?;
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(follow(out, Arc::clone(&tail)));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(follow(err, Arc::clone(&tail)));
        }
        Ok(ServerProcess { name, child: Mutex::new(child), tail, readers })
    }

    /// The exit status, once it has exited.
    pub fn exited(&self) -> Option<std::process::ExitStatus> {
        self.child.lock().unwrap_or_else(PoisonError::into_inner).try_wait().ok().flatten()
    }

    /// `error` as this server's failure, with whether it exited and what it printed last.
    pub fn failed(&self, request: Option<String>, status: Option<u16>, error: impl Into<String>) -> PeerError {
        let mut error = error.into();
        if let Some(exit) = self.exited() {
            error.push_str(&format!(" ({} has exited: {exit})", self.name));
            // Its last words may still be in the pipes.
            let deadline = Instant::now() + EXIT_OUTPUT_WAIT;
            while !self.readers.iter().all(JoinHandle::is_finished) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let server_log = self.tail.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect();
        PeerError { server: self.name.clone(), request, status, error, server_log }
    }

    /// A failed request of this server's.
    pub fn request_failed(&self, e: RequestError) -> PeerError {
        self.failed(Some(e.request), e.status, e.error)
    }

    /// Waits until `ready` answers true, the process exits, or `limit` passes.
    pub async fn wait_until<F, Fut>(&self, limit: Duration, mut ready: F) -> Result<(), PeerError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let started = Instant::now();
        while started.elapsed() < limit {
            if ready().await {
                return Ok(());
            }
            if self.exited().is_some() {
                return Err(self.failed(None, None, "it ended before it was ready"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(self.failed(None, None, format!("not ready within {} s", limit.as_secs())))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Reads `stream` line by line into `tail`, keeping the last `TAIL_LINES`.
fn follow(stream: impl Read + Send + 'static, tail: Arc<Mutex<VecDeque<String>>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            let text: String = String::from_utf8_lossy(&line).trim_end().chars().take(LINE_CHARS).collect();
            line.clear();
            let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(text);
        }
    })
}

/// A running llama-server, killed on drop.
pub struct LlamaServer {
    process: ServerProcess,
    base: String,
    client: reqwest::Client,
}

/// One streamed reply as the bench sees it.
pub struct ServerTurn {
    pub text: String,
    /// From sending the request to the first streamed text.
    pub ttft_ms: f64,
    /// Prompt tokens the server took from its cache (its own `timings.cache_n`).
    pub cached_tokens: u32,
}

impl LlamaServer {
    /// Starts the server with one slot; `extra` arguments are passed on (an alias, an API key …).
    pub async fn start(
        binary: &Path,
        model: &Path,
        threads: u32,
        n_ctx: u32,
        n_batch: u32,
        extra: &[&str],
    ) -> Result<LlamaServer, PeerError> {
        LlamaServer::start_with_slots(binary, model, threads, n_ctx, n_batch, 1, extra).await
    }

    /// Starts the server with `slots` parallel sequences sharing `n_ctx` (continuous batching).
    pub async fn start_with_slots(
        binary: &Path,
        model: &Path,
        threads: u32,
        n_ctx: u32,
        n_batch: u32,
        slots: u32,
        extra: &[&str],
    ) -> Result<LlamaServer, PeerError> {
        let name = format!("llama-server ({slots} slot{}{})", if slots == 1 { "" } else { "s" }, extra_words(extra));
        let port =
            free_port().map_err(|e| PeerError { server: name.clone(), request: None, status: None, error: e, server_log: Vec::new() })?;
        let mut command = Command::new(binary);
        command
            .arg("--model")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--threads", &threads.to_string(), "--threads-batch", &threads.to_string()])
            .args(["--ctx-size", &n_ctx.to_string(), "--batch-size", &n_batch.to_string()])
            .args(["--ubatch-size", &n_batch.to_string(), "--parallel", &slots.to_string(), "--jinja", "--no-webui"])
            .args(extra);
        let process = ServerProcess::spawn(name, command)?;
        let server = LlamaServer { process, base: format!("http://127.0.0.1:{port}"), client: client() };
        let health = format!("{}/health", server.base);
        server
            .process
            .wait_until(Duration::from_secs(120), || {
                let (client, health) = (&server.client, &health);
                async move { client.get(health).send().await.is_ok_and(|r| r.status().is_success()) }
            })
            .await?;
        Ok(server)
    }

    /// Where it listens, e.g. `http://127.0.0.1:41234`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// Its process (its name and output, for a failed request made elsewhere).
    pub fn process(&self) -> &ServerProcess {
        &self.process
    }

    /// One greedy reply of exactly `max_tokens` tokens to `messages` (role/content pairs).
    pub async fn reply(&self, messages: &[(&str, &str)], max_tokens: u32, cache_prompt: bool) -> Result<ServerTurn, PeerError> {
        let body = greedy_body(messages, max_tokens, json!({ "cache_prompt": cache_prompt }));
        stream_reply(&self.client, &format!("{}/v1", self.base), &body).await.map_err(|e| self.process.request_failed(e))
    }
}

/// The arguments that tell two of the bench's servers apart, for its name (not the API key).
fn extra_words(extra: &[&str]) -> String {
    match extra.first() {
        Some(&"--cache-ram") => format!(", --cache-ram {}", extra.get(1).unwrap_or(&"")),
        _ => String::new(),
    }
}

/// A streamed, greedy chat request of exactly `max_tokens` tokens (end of turn ignored);
/// `extra`'s fields are added (a model name, `cache_prompt` …).
pub fn greedy_body(messages: &[(&str, &str)], max_tokens: u32, extra: Value) -> Value {
    let messages: Vec<Value> = messages.iter().map(|(role, content)| json!({ "role": role, "content": content })).collect();
    let mut body = json!({ "messages": messages, "stream": true, "max_tokens": max_tokens, "temperature": 0, "ignore_eos": true });
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    body
}

/// An error with every cause below it: reqwest's own words ("error sending request for url …")
/// hide whether the connection was refused, reset or closed.
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut words = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !words.contains(&said) {
            words.push_str(": ");
            words.push_str(&said);
        }
        cause = c.source();
    }
    words
}

/// Sends `body` to `{base}/chat/completions` of any OpenAI-compatible server and reads the
/// streamed reply to its end.
pub async fn stream_reply(client: &reqwest::Client, base: &str, body: &Value) -> Result<ServerTurn, RequestError> {
    let url = format!("{base}/chat/completions");
    let failed = |status: Option<u16>, error: String| RequestError { request: format!("POST {url}"), status, error };
    let started = Instant::now();
    let mut response = client.post(&url).json(body).send().await.map_err(|e| failed(None, with_causes(&e)))?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        return Err(failed(Some(status.as_u16()), body.chars().take(BODY_CHARS).collect()));
    }
    let mut turn = ServerTurn { text: String::new(), ttft_ms: 0.0, cached_tokens: 0 };
    let mut pending = String::new();
    let broke = |e: reqwest::Error| failed(Some(status.as_u16()), format!("the stream broke: {}", with_causes(&e)));
    while let Some(chunk) = response.chunk().await.map_err(broke)? {
        pending.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = pending.find('\n') {
            let line: String = pending.drain(..=end).collect();
            let Some(data) = line.trim().strip_prefix("data:").map(str::trim) else { continue };
            if data == "[DONE]" {
                return Ok(turn);
            }
            let event: Value =
                serde_json::from_str(data).map_err(|e| failed(Some(status.as_u16()), format!("the server sent {data:?}: {e}")))?;
            if let Some(text) = event["choices"][0]["delta"]["content"].as_str().filter(|t| !t.is_empty()) {
                if turn.text.is_empty() {
                    turn.ttft_ms = started.elapsed().as_secs_f64() * 1000.0;
                }
                turn.text.push_str(text);
            }
            if let Some(cached) = event["timings"]["cache_n"].as_u64() {
                turn.cached_tokens = cached as u32;
            }
        }
    }
    Ok(turn)
}

/// The bench's HTTP client: a connection per request. Kept connections raced the server's closing
/// of them: llama-server (`--parallel 4`) answered a warm-up and four requests, then the first of
/// four clients at once was sent on a connection it had just closed — "connection closed before
/// message completed", no task in its log (2 runs of 5 of the `parallel` section, 2026-11-28), and
/// a POST is not sent again by itself. A loopback connect costs far less than the noise.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap_or_default()
}

pub fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// `--server PATH`, else the build of scripts/build-llama-server.sh when it exists.
pub fn find_binary(given: Option<PathBuf>) -> Option<PathBuf> {
    given.or_else(|| {
        let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/llama-server/bin/llama-server");
        built.is_file().then_some(built)
    })
}
