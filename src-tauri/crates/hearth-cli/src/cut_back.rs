//! `hearth-cli bench-cut-back`: what a chat reads again when it is cut back — regenerated, its
//! last message edited, a message three turns back edited, switched away from and back — and what
//! it takes parked in RAM. For models whose cache cannot simply be cut back (sliding-window,
//! hybrid), where checkpoints or a full-size window cache decide it (docs/benchmarks.md).

use serde::Serialize;

use hearth_core::{ChatMessage, ReplyStats, Role, SamplingParams};
use hearth_engine::{Engine, HostProgram, LoadParams};

use crate::args::BenchArgs;
use crate::bench_kit::reply_with;

/// The chat's turns before the cut backs, and each reply's length.
const TURNS: usize = 20;
const REPLY_TOKENS: u32 = 100;

#[derive(Serialize)]
struct CutBackReport {
    model: String,
    n_ctx: u32,
    chat_tokens: u32,
    /// Prompt tokens read again (prompt − cached) after each cut back, and as a share of the prompt.
    regenerate_read: u32,
    edit_last_read: u32,
    edit_three_back_read: u32,
    switch_back_regenerate_read: u32,
    edit_three_back_read_share: f64,
    /// What the chat takes parked in RAM (its state and checkpoints).
    parked_chat_bytes: u64,
}

fn user(turn: usize) -> ChatMessage {
    ChatMessage::new(
        Role::User,
        format!("Turn {turn}: tell me about rivers, mountains, forests, deserts, oceans, islands and the weather of each, with examples."),
    )
}

async fn reply(engine: &Engine, chat: i64, history: &[ChatMessage]) -> Result<(String, ReplyStats), String> {
    let sampling = SamplingParams { ignore_eos: true, ..SamplingParams::greedy(REPLY_TOKENS) };
    reply_with(engine, history, sampling, Some(chat)).await
}

fn read_again(stats: &ReplyStats) -> u32 {
    stats.prompt_tokens - stats.cached_tokens
}

pub async fn run(args: BenchArgs) -> Result<(), String> {
    let n_ctx = args.n_ctx.unwrap_or(8192);
    let kv_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let engine = Engine::spawn_with(HostProgram::from_env().with_kv_dir(kv_dir.path()));
    let load = LoadParams { n_ctx: Some(n_ctx), n_threads: Some(args.threads), ..LoadParams::default() };
    engine.load(&args.model, load).await.map_err(|e| e.to_string())?;

    let mut chat = Vec::new();
    let mut last = ReplyStats::default();
    for turn in 0..TURNS {
        chat.push(user(turn));
        let (text, stats) = reply(&engine, 1, &chat).await?;
        chat.push(ChatMessage::new(Role::Assistant, text));
        last = stats;
    }
    chat.pop(); // The last reply, regenerated below.
    let (_, regenerate) = reply(&engine, 1, &chat).await?;
    let mut edited = chat.clone();
    *edited.last_mut().expect("turns ran") = ChatMessage::new(Role::User, "Tell me instead about glaciers, volcanoes and canyons.");
    let (_, edit_last) = reply(&engine, 1, &edited).await?;
    let mut earlier = chat[..chat.len() - 6].to_vec();
    *earlier.last_mut().expect("turns ran") = ChatMessage::new(Role::User, "Something else entirely.");
    let (_, edit_three_back) = reply(&engine, 1, &earlier).await?;
    reply(&engine, 1, &chat).await?; // Back to the long version.
    reply(&engine, 2, &[ChatMessage::new(Role::User, "Hello.")]).await?;
    let parked_chat_bytes = engine.held_memory().await.chat_caches;
    let (_, switch_back) = reply(&engine, 1, &chat).await?;
    engine.shutdown();

    let report = CutBackReport {
        model: args.model.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        n_ctx,
        chat_tokens: last.prompt_tokens + last.completion_tokens,
        regenerate_read: read_again(&regenerate),
        edit_last_read: read_again(&edit_last),
        edit_three_back_read: read_again(&edit_three_back),
        switch_back_regenerate_read: read_again(&switch_back),
        edit_three_back_read_share: f64::from(read_again(&edit_three_back)) / f64::from(edit_three_back.prompt_tokens),
        parked_chat_bytes,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report).map_err(|e| e.to_string())?);
    } else {
        println!("{}", serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?);
    }
    Ok(())
}
