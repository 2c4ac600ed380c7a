//! Shared by the engine's integration tests: the real model and a reply runner.
#![allow(dead_code)] // Each test binary uses a different part.

use std::path::PathBuf;

use hearth_core::{
    CancelFlag, ChatBackend, ChatMessage, FinishReason, GenEvent, ReplyRequest, ReplyStats, Role, SamplingParams, TokenLogprob,
};
use hearth_engine::{Engine, HostProgram, LoadParams};

/// One model test at a time within a test binary: each engine runs two llama.cpp threads that
/// wait actively (OpenMP spins), and on a two-core machine several engines at once spin against
/// each other — sampling.rs's four tests took 845 s side by side and 14 s one after another.
pub async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

pub fn model_path() -> PathBuf {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    assert!(path.exists(), "{} is missing: run scripts/fetch-model.sh target/test-data", path.display());
    path
}

pub async fn loaded_engine() -> Engine {
    engine_with_context(2048).await
}

/// A new engine process of this crate's own host binary, with the test-only hooks on.
pub fn spawn_engine() -> Engine {
    Engine::spawn_with(HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host")).with_test_hooks())
}

pub async fn engine_with_context(n_ctx: u32) -> Engine {
    let engine = spawn_engine();
    let params = LoadParams { n_ctx: Some(n_ctx), n_threads: Some(2), ..LoadParams::default() };
    let info = engine.load(&model_path(), params).await.expect("the real model loads");
    assert_eq!(info.name, "SmolLM2-135M-Instruct.Q4_1");
    engine
}

pub fn greedy(max_tokens: u32) -> SamplingParams {
    SamplingParams::greedy(max_tokens)
}

pub struct Reply {
    pub text: String,
    pub deltas: usize,
    pub reason: FinishReason,
    pub stats: ReplyStats,
    /// A search's progress as it was told (`GenEvent::Searching`), in order.
    pub searching: Vec<u32>,
}

/// One reply of `conversation` (its cache kept between turns) run to the end: its text and stats.
pub async fn chat_reply(engine: &Engine, conversation: i64, messages: &[ChatMessage], sampling: SamplingParams) -> (String, ReplyStats) {
    let mut request = ReplyRequest::new(messages.to_vec(), sampling, CancelFlag::new());
    request.conversation = Some(conversation);
    let mut stream = engine.start_reply(request).expect("a model is loaded");
    let mut text = String::new();
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(d) => text.push_str(&d),
            GenEvent::Finished { stats, .. } => return (text, stats),
            GenEvent::Failed(e) => panic!("generation failed: {e}"),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) => panic!("log-probabilities were not asked for"),
            GenEvent::Searching { .. } => {}
        }
    }
    panic!("the stream ended without Finished");
}

/// Runs one reply to the end; `stop_after` raises the cancel flag after that many deltas.
pub async fn reply(engine: &Engine, messages: &[ChatMessage], sampling: SamplingParams, stop_after: Option<usize>) -> Reply {
    reply_to(engine, ReplyRequest::new(messages.to_vec(), sampling, CancelFlag::new()), stop_after).await
}

/// `request` run to the end (cancelled after `stop_after` deltas if given).
pub async fn reply_to(engine: &Engine, request: ReplyRequest, stop_after: Option<usize>) -> Reply {
    let cancel = request.cancel.clone();
    let mut stream = engine.start_reply(request).expect("a model is loaded");
    let (mut text, mut deltas, mut searching) = (String::new(), 0, Vec::new());
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(d) => {
                text.push_str(&d);
                deltas += 1;
                if stop_after == Some(deltas) {
                    cancel.cancel();
                }
            }
            GenEvent::Searching { tokens } => searching.push(tokens),
            GenEvent::Finished { reason, stats } => return Reply { text, deltas, reason, stats, searching },
            GenEvent::Failed(e) => panic!("generation failed: {e}"),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) => panic!("log-probabilities were not asked for"),
        }
    }
    panic!("the stream ended without Finished");
}

/// Runs one reply asking for each token's log-probability with `top` alternatives.
pub async fn reply_with_logprobs(
    engine: &Engine,
    messages: &[ChatMessage],
    sampling: SamplingParams,
    top: u32,
) -> (String, Vec<TokenLogprob>) {
    let mut request = ReplyRequest::new(messages.to_vec(), sampling, CancelFlag::new());
    request.logprobs = Some(top);
    let mut stream = engine.start_reply(request).expect("a model is loaded");
    let (mut text, mut tokens) = (String::new(), Vec::new());
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(d) => text.push_str(&d),
            GenEvent::Logprobs(more) => tokens.extend(more),
            GenEvent::TokenProbs(_) => panic!("the sampler's distributions were not asked for"),
            GenEvent::Searching { .. } => {}
            GenEvent::Finished { .. } => return (text, tokens),
            GenEvent::Failed(e) => panic!("generation failed: {e}"),
        }
    }
    panic!("the stream ended without Finished");
}

pub fn user(text: &str) -> Vec<ChatMessage> {
    vec![ChatMessage::new(Role::User, text)]
}

/// Runs a request that must fail and returns the error's words.
pub async fn reply_error(engine: &Engine, messages: &[ChatMessage], sampling: SamplingParams) -> String {
    request_error(engine, ReplyRequest::new(messages.to_vec(), sampling, CancelFlag::new())).await
}

/// Why `request` failed, in words.
pub async fn request_error(engine: &Engine, request: ReplyRequest) -> String {
    let mut stream = engine.start_reply(request).expect("a model is loaded");
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Failed(e) => return e.to_string(),
            GenEvent::Finished { .. } => panic!("the request should have failed"),
            GenEvent::Delta(_) | GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => {}
        }
    }
    panic!("the stream ended without Failed");
}
