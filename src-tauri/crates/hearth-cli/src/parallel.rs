//! The concurrency bench: four clients streaming at once from Hearth's server against one client
//! at a time, and against llama-server with four slots (its continuous batching), with the same
//! model, threads and context per sequence, each server in its own process. Greedy replies of an
//! exact length; aggregate tok/s, the best of five alternating rounds per side.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::json;

use hearth_engine::LoadParams;

use crate::args::BenchArgs;
use crate::bench_kit::BenchError;
use crate::peer::{LlamaServer, PeerError, RequestError, ServerProcess, client, free_port, greedy_body, stream_reply};

/// Clients at once.
const CLIENTS: u32 = 4;
/// Each reply's length (end of turn ignored).
const REPLY_TOKENS: u32 = 64;

const QUESTIONS: [&str; CLIENTS as usize] = [
    "Explain how a bicycle stays upright.",
    "Write a short poem about the sea.",
    "What should I pack for a weekend of hiking?",
    "Describe the water cycle to a child.",
];

#[derive(Serialize)]
pub struct ParallelReport {
    /// Hearth's server: aggregate tok/s of four clients at once ÷ of one client at a time.
    pub parallel4_vs_single: f64,
    /// Hearth's four at once ÷ llama-server's (`--parallel 4`) four at once (absent without a server).
    pub parallel4_vs_server: Option<f64>,
    pub parallel4_tps: f64,
    pub single_client_tps: f64,
    pub server_parallel4_tps: Option<f64>,
    pub server_single_client_tps: Option<f64>,
    /// Whether each client's greedy reply among four equals its reply alone.
    pub parallel4_outputs_identical: bool,
}

struct Measured {
    single_tps: f64,
    parallel_tps: f64,
    identical: bool,
}

/// Rounds per side, alternating; each side keeps its best (noise only ever takes speed away).
const ROUNDS: usize = 5;

pub async fn run(args: &BenchArgs, load: LoadParams, n_ctx: u32, server: Option<&Path>) -> Result<ParallelReport, BenchError> {
    let (mut hearth, mut peer): (Option<Measured>, Option<Measured>) = (None, None);
    for _ in 0..ROUNDS {
        // `hearth-cli serve` in a process of its own, as llama-server runs in its own.
        let served = HearthServe::start(args, &load, n_ctx).await?;
        let measured = measure(&served.base, &served.model).await.map_err(|e| served.process.request_failed(e))?;
        drop(served);
        hearth = Some(best(hearth, measured));
        if let Some(binary) = server {
            // Each of its slots gets the context one Hearth sequence has.
            let server =
                LlamaServer::start_with_slots(binary, &args.model, args.threads, n_ctx * CLIENTS, load.n_batch, CLIENTS, &[]).await?;
            let measured = measure(&format!("{}/v1", server.base_url()), "model").await.map_err(|e| server.process().request_failed(e))?;
            peer = Some(best(peer, measured));
        }
    }
    let hearth = hearth.ok_or_else(|| BenchError::from("no round ran".to_owned()))?;
    Ok(ParallelReport {
        parallel4_vs_single: hearth.parallel_tps / hearth.single_tps,
        parallel4_vs_server: peer.as_ref().map(|p| hearth.parallel_tps / p.parallel_tps),
        parallel4_tps: hearth.parallel_tps,
        single_client_tps: hearth.single_tps,
        server_parallel4_tps: peer.as_ref().map(|p| p.parallel_tps),
        server_single_client_tps: peer.as_ref().map(|p| p.single_tps),
        parallel4_outputs_identical: hearth.identical,
    })
}

/// The faster of each figure; outputs identical only if they were in every round.
fn best(kept: Option<Measured>, new: Measured) -> Measured {
    match kept {
        None => new,
        Some(kept) => Measured {
            single_tps: kept.single_tps.max(new.single_tps),
            parallel_tps: kept.parallel_tps.max(new.parallel_tps),
            identical: kept.identical && new.identical,
        },
    }
}

/// `hearth-cli serve` (this very binary) with the bench's model and load settings, killed on drop.
struct HearthServe {
    process: ServerProcess,
    base: String,
    model: String,
}

impl HearthServe {
    async fn start(args: &BenchArgs, load: &LoadParams, n_ctx: u32) -> Result<HearthServe, PeerError> {
        const NAME: &str = "hearth-cli serve";
        let failed = |error: String| PeerError { server: NAME.into(), request: None, status: None, error, server_log: Vec::new() };
        let exe = std::env::current_exe().map_err(|e| failed(format!("cannot find hearth-cli itself: {e}")))?;
        let port = free_port().map_err(failed)?;
        let number = |n: u32| n.to_string();
        let mut command = Command::new(exe);
        command.arg("serve").arg("--model").arg(&args.model).args(["--threads", &number(args.threads), "--ctx", &number(n_ctx)]).args([
            "--batch",
            &number(load.n_batch),
            "--ubatch",
            &number(load.n_ubatch),
            "--port",
            &number(u32::from(port)),
        ]);
        let process = ServerProcess::spawn(NAME, command)?;
        let base = format!("http://127.0.0.1:{port}/v1");
        let client = client();
        let listed = std::cell::RefCell::new(String::new());
        process
            .wait_until(Duration::from_secs(120), || {
                let (client, url, listed) = (&client, format!("{base}/models"), &listed);
                async move {
                    let Ok(response) = client.get(url).send().await else { return false };
                    let Ok(models) = response.json::<serde_json::Value>().await else { return false };
                    let Some(id) = models["data"][0]["id"].as_str() else { return false };
                    *listed.borrow_mut() = id.to_owned();
                    true
                }
            })
            .await?;
        Ok(HearthServe { process, base, model: listed.into_inner() })
    }
}

/// The questions one after another, then all at once, against the server at `base`.
async fn measure(base: &str, model: &str) -> Result<Measured, RequestError> {
    let client = client();
    let body = |question: &str| greedy_body(&[("user", question)], REPLY_TOKENS, json!({ "model": model }));
    stream_reply(&client, base, &body("Hello.")).await?; // Warm up: first allocations, threads.
    let tokens = f64::from(CLIENTS * REPLY_TOKENS);

    let started = Instant::now();
    let mut alone = Vec::new();
    for question in QUESTIONS {
        alone.push(stream_reply(&client, base, &body(question)).await?.text);
    }
    let single_tps = tokens / started.elapsed().as_secs_f64();

    let started = Instant::now();
    let mut clients = tokio::task::JoinSet::new();
    for (i, question) in QUESTIONS.iter().enumerate() {
        let (client, base, body) = (client.clone(), base.to_owned(), body(question));
        clients.spawn(async move { (i, stream_reply(&client, &base, &body).await) });
    }
    let mut together = vec![String::new(); QUESTIONS.len()];
    while let Some(done) = clients.join_next().await {
        let (i, turn) = done.map_err(|e| RequestError { request: format!("client task at {base}"), status: None, error: e.to_string() })?;
        together[i] = turn?.text;
    }
    let parallel_tps = tokens / started.elapsed().as_secs_f64();
    Ok(Measured { single_tps, parallel_tps, identical: together == alone })
}
