//! The concurrency bench: four clients streaming at once from Hearth's server against one client
//! at a time, and against llama-server with four slots (its continuous batching), with the same
//! model, threads and context per sequence. Greedy replies of an exact length; aggregate tok/s.

use std::net::IpAddr;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use hearth_core::SamplingParams;
use hearth_engine::{Engine, LoadParams};
use hearth_server::{RequestLog, ServerConfig, ServerState};

use crate::args::BenchArgs;
use crate::peer::{LlamaServer, greedy_body, stream_reply};

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

pub async fn run(args: &BenchArgs, load: LoadParams, n_ctx: u32, server: Option<&Path>) -> Result<ParallelReport, String> {
    let engine = Engine::spawn();
    let model = engine.load(&args.model, load.clone()).await.map_err(|e| e.to_string())?.name;
    let config = ServerConfig { host: IpAddr::from([127, 0, 0, 1]), port: 0, api_key: None, sampling: SamplingParams::default() };
    let listener = hearth_server::bind(&config).await.map_err(|e| e.to_string())?;
    let base = format!("http://{}/v1", listener.local_addr().map_err(|e| e.to_string())?);
    let serving = tokio::spawn(hearth_server::serve(listener, ServerState::new(engine.clone(), &config, RequestLog::default())));
    let hearth = measure(&base, &model).await;
    serving.abort();
    engine.shutdown();
    let hearth = hearth?;

    let peer = match server {
        Some(binary) => {
            // Each of its slots gets the context one Hearth sequence has.
            let server =
                LlamaServer::start_with_slots(binary, &args.model, args.threads, n_ctx * CLIENTS, load.n_batch, CLIENTS, &[]).await?;
            Some(measure(&format!("{}/v1", server.base_url()), "model").await?)
        }
        None => None,
    };
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

/// The questions one after another, then all at once, against the server at `base`.
async fn measure(base: &str, model: &str) -> Result<Measured, String> {
    let client = reqwest::Client::new();
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
        let (i, turn) = done.map_err(|e| e.to_string())?;
        together[i] = turn?.text;
    }
    let parallel_tps = tokens / started.elapsed().as_secs_f64();
    Ok(Measured { single_tps, parallel_tps, identical: together == alone })
}
