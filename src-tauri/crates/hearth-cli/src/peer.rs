//! llama.cpp's own server (`llama-server`) as the bench's peer: started on 127.0.0.1 with the
//! same model, threads and context, and spoken to over its OpenAI-compatible streaming API.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A running llama-server, killed on drop.
pub struct LlamaServer {
    child: Child,
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
    pub async fn start(binary: &Path, model: &Path, threads: u32, n_ctx: u32, n_batch: u32, extra: &[&str]) -> Result<LlamaServer, String> {
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
    ) -> Result<LlamaServer, String> {
        let port = free_port()?;
        let child = Command::new(binary)
            .arg("--model")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--threads", &threads.to_string(), "--threads-batch", &threads.to_string()])
            .args(["--ctx-size", &n_ctx.to_string(), "--batch-size", &n_batch.to_string()])
            .args(["--ubatch-size", &n_batch.to_string(), "--parallel", &slots.to_string(), "--jinja", "--no-webui"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let server = LlamaServer { child, base: format!("http://127.0.0.1:{port}"), client: reqwest::Client::new() };
        server.wait_until_ready(Duration::from_secs(120)).await?;
        Ok(server)
    }

    /// Where it listens, e.g. `http://127.0.0.1:41234`. (Used by hearth-providers' peer test,
    /// which includes this file.)
    #[allow(dead_code)]
    pub fn base_url(&self) -> &str {
        &self.base
    }

    async fn wait_until_ready(&self, limit: Duration) -> Result<(), String> {
        let started = Instant::now();
        while started.elapsed() < limit {
            let health = self.client.get(format!("{}/health", self.base)).send().await;
            if health.is_ok_and(|r| r.status().is_success()) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("llama-server did not become ready within {} s", limit.as_secs()))
    }

    /// One greedy reply of exactly `max_tokens` tokens to `messages` (role/content pairs).
    pub async fn reply(&self, messages: &[(&str, &str)], max_tokens: u32, cache_prompt: bool) -> Result<ServerTurn, String> {
        let body = greedy_body(messages, max_tokens, json!({ "cache_prompt": cache_prompt }));
        stream_reply(&self.client, &format!("{}/v1", self.base), &body).await.map_err(|e| format!("llama-server: {e}"))
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

/// Sends `body` to `{base}/chat/completions` of any OpenAI-compatible server and reads the
/// streamed reply to its end.
pub async fn stream_reply(client: &reqwest::Client, base: &str, body: &Value) -> Result<ServerTurn, String> {
    let started = Instant::now();
    let mut response = client
        .post(format!("{base}/chat/completions"))
        .json(body)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| e.to_string())?;
    let mut turn = ServerTurn { text: String::new(), ttft_ms: 0.0, cached_tokens: 0 };
    let mut pending = String::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("the stream broke: {e}"))? {
        pending.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = pending.find('\n') {
            let line: String = pending.drain(..=end).collect();
            let Some(data) = line.trim().strip_prefix("data:").map(str::trim) else { continue };
            if data == "[DONE]" {
                return Ok(turn);
            }
            let event: Value = serde_json::from_str(data).map_err(|e| format!("the server sent {data:?}: {e}"))?;
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

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
