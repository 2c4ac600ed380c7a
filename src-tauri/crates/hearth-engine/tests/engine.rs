//! The engine against the real SmolLM2-135M-Instruct Q4_1 model (fetched by scripts/fetch-model.sh).

use std::path::PathBuf;

use hearth_core::{
    CancelFlag, ChatBackend, ChatMessage, FinishReason, GenEvent, ReplyRequest, ReplyStats, Role,
    SamplingParams,
};
use hearth_engine::{Engine, EngineError, GgufError, LoadParams};

fn model_path() -> PathBuf {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    assert!(path.exists(), "{} is missing: run scripts/fetch-model.sh target/test-data", path.display());
    path
}

async fn loaded_engine() -> Engine {
    let engine = Engine::spawn();
    let params = LoadParams { n_ctx: Some(2048), n_threads: Some(2), ..LoadParams::default() };
    let info = engine.load(&model_path(), params).await.expect("the real model loads");
    assert_eq!(info.name, "SmolLM2-135M-Instruct.Q4_1");
    engine
}

fn greedy(max_tokens: u32) -> SamplingParams {
    SamplingParams { temperature: 0.0, seed: None, max_tokens }
}

struct Reply {
    text: String,
    deltas: usize,
    reason: FinishReason,
    stats: ReplyStats,
}

/// Runs one reply to the end; `stop_after` raises the cancel flag after that many deltas.
async fn reply(engine: &Engine, messages: &[ChatMessage], sampling: SamplingParams, stop_after: Option<usize>) -> Reply {
    let cancel = CancelFlag::new();
    let request = ReplyRequest { messages: messages.to_vec(), sampling, cancel: cancel.clone() };
    let mut stream = engine.start_reply(request).expect("a model is loaded");
    let (mut text, mut deltas) = (String::new(), 0);
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(d) => {
                text.push_str(&d);
                deltas += 1;
                if stop_after == Some(deltas) {
                    cancel.cancel();
                }
            }
            GenEvent::Finished { reason, stats } => return Reply { text, deltas, reason, stats },
            GenEvent::Failed(e) => panic!("generation failed: {e}"),
        }
    }
    panic!("the stream ended without Finished");
}

fn user(text: &str) -> Vec<ChatMessage> {
    vec![ChatMessage::new(Role::User, text)]
}

#[tokio::test]
async fn replies_to_a_real_prompt_deterministically_and_reuses_the_cache() {
    let engine = loaded_engine().await;
    let prompt = user("What is the capital of France? Answer in one sentence.");
    let first = reply(&engine, &prompt, greedy(48), None).await;
    assert!(first.text.contains("Paris"), "{:?}", first.text);
    assert!(first.stats.completion_tokens > 0 && first.stats.prompt_tokens > 10, "{:?}", first.stats);
    assert_eq!(first.stats.cached_tokens, 0);
    assert!(first.stats.ttft_ms > 0.0);

    // Greedy decoding is deterministic, and the identical prompt is served from the KV cache,
    // all but the last token (whose logits must be recomputed).
    let again = reply(&engine, &prompt, greedy(48), None).await;
    assert_eq!(again.text, first.text);
    assert_eq!(again.stats.cached_tokens, again.stats.prompt_tokens - 1);

    // The next turn reuses the previous prompt and the reply.
    let mut next = prompt.clone();
    next.push(ChatMessage::new(Role::Assistant, first.text.clone()));
    next.push(ChatMessage::new(Role::User, "And of Italy?"));
    let second = reply(&engine, &next, greedy(16), None).await;
    assert!(second.stats.cached_tokens >= first.stats.prompt_tokens, "{:?} vs {:?}", second.stats, first.stats);
}

#[tokio::test]
async fn stops_mid_reply_and_honours_max_tokens() {
    let engine = loaded_engine().await;
    let long = user("Write a long story about a dragon who learns to bake bread.");
    let stopped = reply(&engine, &long, greedy(400), Some(3)).await;
    assert_eq!(stopped.reason, FinishReason::Cancelled);
    assert!(stopped.stats.completion_tokens <= 4, "{:?}", stopped.stats);

    let capped = reply(&engine, &long, greedy(5), None).await;
    assert_eq!(capped.reason, FinishReason::Length);
    assert_eq!(capped.stats.completion_tokens, 5);
    assert!(capped.deltas >= 1);

    // A fixed seed reproduces a sampled reply.
    let seeded = SamplingParams { temperature: 1.0, seed: Some(42), max_tokens: 24 };
    let a = reply(&engine, &long, seeded.clone(), None).await;
    let b = reply(&engine, &long, seeded, None).await;
    assert_eq!(a.text, b.text);
}

#[tokio::test]
async fn bad_files_give_clear_errors_and_keep_the_loaded_model() {
    let engine = loaded_engine().await;
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read(model_path()).unwrap();

    let not_gguf = dir.path().join("notes.gguf");
    std::fs::write(&not_gguf, b"this is a text file, not a model").unwrap();
    let truncated = dir.path().join("truncated.gguf");
    std::fs::write(&truncated, &real[..real.len() / 2]).unwrap();
    let missing = dir.path().join("missing.gguf");

    let check = |result: Result<_, EngineError>, expected: &str| {
        let message = result.expect_err("a bad file must not load").to_string();
        assert!(message.contains(expected), "{message:?} should contain {expected:?}");
    };
    check(engine.load(&not_gguf, LoadParams::default()).await, "is not a GGUF model file");
    check(engine.load(&truncated, LoadParams::default()).await, "is truncated");
    check(engine.load(&missing, LoadParams::default()).await, "cannot be read");

    let after = reply(&engine, &user("Say hi."), greedy(4), None).await;
    assert!(after.stats.completion_tokens > 0);
    assert!(matches!(
        engine.load(&not_gguf, LoadParams::default()).await,
        Err(EngineError::InvalidFile(GgufError::NotGguf { .. }))
    ));
}
