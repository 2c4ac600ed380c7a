//! Models whose cache cannot simply be cut back keep their prefix reuse: a hybrid model
//! (LFM2's recurrent short-convolution layers between attention layers) and a sliding-window
//! model (Gemma 3's layout, the window 64 tokens) with a full-size window cache (a short
//! context) and with its window cache and checkpoints (a long one). Regenerating, editing the last message,
//! typing a draft, switching chats and restarting each read only what changed since a
//! checkpoint — never the whole prompt again — and each reply is the one a cache that was never
//! cut back gives (the first: the one an engine without any cache gives). The models are tiny and random (scripts/make-test-models.py), with SmolLM2's
//! tokenizer and template: llama.cpp builds their real graphs and caches.

mod common;

use std::path::{Path, PathBuf};

use hearth_core::{CancelFlag, ChatBackend, ChatMessage, PromptSource, ReplyRequest, ReplyStats, Role, SamplingParams};
use hearth_engine::checkpoints::END_CHECKPOINT_BACK;
use hearth_engine::{Engine, HostProgram, LoadParams};

use common::{chat_reply, model_path, one_at_a_time};

fn test_model(name: &str) -> PathBuf {
    let path = model_path().with_file_name(name);
    assert!(path.exists(), "{} is missing: run scripts/setup.sh test (scripts/make-test-models.py)", path.display());
    path
}

/// A short context (a sliding window's layers keep every cell) or a long one with small
/// batches (its window cache holds 256 cells, fewer than the chat's tokens).
fn params(long: bool, reuse_kv: bool) -> LoadParams {
    let (n_ctx, n_ubatch) = if long { (4096, 64) } else { (1024, 512) };
    LoadParams { n_ctx: Some(n_ctx), n_ubatch, n_threads: Some(2), reuse_kv, ..LoadParams::default() }
}

async fn engine(kv_dir: &Path, model: &Path, params: LoadParams) -> Engine {
    let engine = Engine::spawn_with(HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host")).with_kv_dir(kv_dir));
    engine.load(model, params).await.expect("the model loads");
    engine
}

async fn reply(engine: &Engine, conversation: i64, messages: &[ChatMessage]) -> (String, ReplyStats) {
    chat_reply(engine, conversation, messages, SamplingParams::greedy(12)).await
}

fn user(text: &str) -> ChatMessage {
    ChatMessage::new(Role::User, text)
}

const OPENING: &str = "Here is a long first message, so that the conversation outgrows a sliding window \
    of sixty-four tokens, and its cache, well before its second turn: rivers, mountains, forests, \
    deserts, oceans, islands, glaciers, volcanoes, canyons and plains all shape the weather of the \
    lands around them. ";

fn first() -> String {
    OPENING.repeat(4)
}
const SECOND: &str = "Now name the three longest rivers of Africa and say where each of them ends.";
const EDITED: &str = "Now name the three highest mountains of Asia and say which country each stands in.";

/// The answer to the last of `turns`, replied to one after another by an engine with a cache
/// (`reuse_kv`) that is never cut back, or with none. (The yardstick after the first turn is a
/// cache, not a cold prefill: a sampled reply's tokens are not those its text is tokenized into.)
async fn answered_in_turn(model: &Path, long: bool, reuse_kv: bool, turns: &[&[ChatMessage]]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let yardstick = engine(dir.path(), model, params(long, reuse_kv)).await;
    let mut answer = String::new();
    for turn in turns {
        answer = reply(&yardstick, 1, turn).await.0;
    }
    yardstick.shutdown();
    answer
}

/// Tokens read again beyond what changed: at most from the end checkpoint.
fn read_again(stats: &ReplyStats) -> u32 {
    stats.prompt_tokens - stats.cached_tokens
}

async fn keeps_its_prefix(name: &str, long: bool) {
    let model = test_model(name);
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), &model, params(long, true)).await;
    let back = END_CHECKPOINT_BACK as u32;

    let mut chat = vec![user(&first())];
    let (first, opening) = reply(&engine, 1, &chat).await;
    assert!(opening.prompt_tokens > 256, "{name}: the first prompt alone outgrows the window's cache: {opening:?}");

    // Regenerate: the same prompt, read again from its end checkpoint only.
    let (again, regenerated) = reply(&engine, 1, &chat).await;
    assert_eq!(again, first, "{name}");
    assert!(read_again(&regenerated) <= back, "{name}: {regenerated:?}");

    // The next turn continues the cache.
    chat.push(ChatMessage::new(Role::Assistant, first.clone()));
    chat.push(user(SECOND));
    let (second, next) = reply(&engine, 1, &chat).await;
    assert_eq!(next.prompt_source, PromptSource::Live, "{name}: {next:?}");
    assert!(next.cached_tokens >= opening.prompt_tokens, "{name}: {next:?}");

    // The last message edited: cut back to where it starts, not to an earlier turn.
    let mut edited = chat.clone();
    *edited.last_mut().unwrap() = user(EDITED);
    let (edited_answer, cut) = reply(&engine, 1, &edited).await;
    assert!(cut.cached_tokens > opening.prompt_tokens, "{name}: {cut:?} after {opening:?}");

    // A draft typed: each key cuts the draft's end back; at Enter little is left. (Its reply is
    // not compared with an uncached one: what was read ahead was read in other batches than one
    // paste, and llama.cpp's batch kernels may part the logits in their last bits.)
    let message = "And which of them is the oldest, and how do we know it?";
    for typed in [10, 25, 40] {
        let mut draft = edited.clone();
        draft.push(ChatMessage::new(Role::Assistant, edited_answer.clone()));
        draft.push(user(&message[..typed]));
        let mut request = ReplyRequest::new(draft, SamplingParams::greedy(12), CancelFlag::new());
        request.conversation = Some(1);
        engine.prefill(request).finished().await;
    }
    let mut typed = edited.clone();
    typed.push(ChatMessage::new(Role::Assistant, edited_answer.clone()));
    typed.push(user(message));
    let (typed_answer, sent) = reply(&engine, 1, &typed).await;
    assert_eq!(sent.prompt_source, PromptSource::Typed, "{name}: {sent:?}");
    assert!(read_again(&sent) <= 2 * back, "{name}: {sent:?}");
    let (regenerated, _) = reply(&engine, 1, &typed).await;

    // Another chat, then back: the cache and its checkpoints come back from RAM, exactly.
    reply(&engine, 2, &[user("Name three colours.")]).await;
    let (from_ram, switched) = reply(&engine, 1, &typed).await;
    assert_eq!(switched.prompt_source, PromptSource::Ram, "{name}: {switched:?}");
    assert!(read_again(&switched) <= back, "{name}: {switched:?}");

    // A restart: from disk, checkpoints too.
    engine.shutdown();
    let engine = crate::engine(dir.path(), &model, params(long, true)).await;
    let (from_disk, restarted) = reply(&engine, 1, &typed).await;
    assert_eq!(restarted.prompt_source, PromptSource::Disk, "{name}: {restarted:?}");
    assert!(read_again(&restarted) <= back, "{name}: {restarted:?}");
    // Back to the first turn, further back than the window: a restored sliding-window cache holds
    // only its window, so this goes to a checkpoint too, and answers as the first time.
    let (first_again, rewound) = reply(&engine, 1, &chat[..1]).await;
    assert_eq!(first_again, first, "{name}: {rewound:?}");
    assert!(read_again(&rewound) <= back, "{name}: {rewound:?}");
    engine.shutdown();

    assert_eq!((&from_ram, &from_disk), (&regenerated, &regenerated), "{name}");
    assert!(!typed_answer.is_empty());
    assert_eq!(first, answered_in_turn(&model, long, false, &[&chat[..1]]).await, "{name}: uncached");
    assert_eq!(second, answered_in_turn(&model, long, true, &[&chat[..1], &chat]).await, "{name}: after a regenerate");
    assert_eq!(edited_answer, answered_in_turn(&model, long, true, &[&chat[..1], &edited]).await, "{name}: edited");
}

#[tokio::test]
async fn a_hybrid_models_cache_is_cut_back_to_checkpoints() {
    let _one = one_at_a_time().await;
    keeps_its_prefix("tiny-lfm2-hybrid.gguf", false).await;
}

#[tokio::test]
async fn a_sliding_window_models_cache_keeps_its_prefix_full_size_or_windowed() {
    let _one = one_at_a_time().await;
    keeps_its_prefix("tiny-gemma3-swa.gguf", false).await;
    keeps_its_prefix("tiny-gemma3-swa.gguf", true).await;
}
