//! `hearth-cli bench`, the sections of a chat that keeps its cache: chat A answered hot, after
//! chat B, and after the engine restarted (`switch`); llama-server with `--cache-ram` on the same
//! A/B/A pattern (`switch-server`); and a turn typed while the draft is read ahead (`typing`).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use hearth_core::{CancelFlag, ChatBackend, ChatMessage, DRAFT_PACE, PromptSource, ReplyRequest, ReplyStats, Role, SamplingParams};
use hearth_engine::{Engine, HostProgram, LoadParams};

use crate::args::BenchArgs;
use crate::bench_kit::{BenchError, N_BATCH, N_CTX, TURN_REPLY_TOKENS, turn_in, user_turn};
use crate::peer::LlamaServer;

/// Turns of chat A before it is left for chat B.
pub const SWITCH_TURNS: usize = 20;
/// Turns of chat B, enough to fill the live cache with another conversation.
const OTHER_TURNS: usize = 3;
/// Repeats of the hot / switch-back and of the restart measurement; each keeps its fastest (a
/// moment of machine noise only ever adds time). Chat A stays within the context throughout.
const SWITCH_ROUNDS: usize = 2;
/// Chat ids of the conversations.
const CHAT_A: i64 = 1;
const CHAT_B: i64 = 2;
const CHAT_TYPED: i64 = 3;
/// llama-server's prompt cache in RAM for the A/B/A pattern (MiB).
const SERVER_CACHE_RAM_MB: &str = "4096";
/// How fast the bench's user types (characters a second).
pub const TYPING_CPS: f64 = 5.0;

/// Chat A (`SWITCH_TURNS` turns) answered hot, then after chat B answered, then after the
/// engine restarted.
#[derive(Serialize)]
pub struct SwitchReport {
    pub switch_hot_ttft_ms: f64,
    pub switch_back_ttft_ms: f64,
    pub restart_ttft_ms: f64,
    /// Where the engine's prompt came from at the switch back and after the restart.
    pub switch_back_source: PromptSource,
    pub restart_source: PromptSource,
    pub switch_back_ttft_ratio: f64,
    pub restart_ttft_ratio: f64,
}

/// llama-server (one slot, `--cache-ram`) on the same A/B/A pattern.
#[derive(Serialize)]
pub struct SwitchServerReport {
    /// Its switch-back TTFT ÷ its hot TTFT.
    pub server_cache_ram_switch_ttft_ratio: f64,
    pub server_switch_hot_ttft_ms: f64,
    pub server_switch_back_ttft_ms: f64,
}

/// Turn `SWITCH_TURNS` of a chat typed at `TYPING_CPS` characters a second with the draft read
/// ahead as the app's composer sends it: TTFT after Enter, and where its prompt came from.
#[derive(Serialize)]
pub struct TypingReport {
    pub typing_ttft_ms: f64,
    pub typing_source: PromptSource,
}

/// The A/B/A pattern on the engine: A's hot turn, B's turns, A's switch-back turn, then a restart
/// of the engine (its caches on disk) and A's next turn; `SWITCH_ROUNDS` times each.
pub async fn switch_back(args: &BenchArgs, load: LoadParams) -> Result<SwitchReport, BenchError> {
    let kv_dir = tempfile::tempdir().map_err(|e| format!("no folder for the KV state files: {e}"))?;
    let spawn = || Engine::spawn_with(HostProgram::from_env().with_kv_dir(kv_dir.path()));
    let engine = spawn();
    engine.load(&args.model, load.clone()).await.map_err(|e| e.to_string())?;
    let mut a = Chat::new(CHAT_A, "A");
    let mut b = Chat::new(CHAT_B, "B");
    a.turns(&engine, SWITCH_TURNS - 1).await?;
    let (mut hot, mut back, mut restart) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..SWITCH_ROUNDS {
        hot.push(a.turns(&engine, 1).await?);
        b.turns(&engine, OTHER_TURNS).await?;
        back.push(a.turns(&engine, 1).await?);
    }
    engine.shutdown();
    for _ in 0..SWITCH_ROUNDS {
        let engine = spawn();
        engine.load(&args.model, load.clone()).await.map_err(|e| e.to_string())?;
        restart.push(a.turns(&engine, 1).await?);
        engine.shutdown();
    }
    let (hot, back, restart) = (fastest(hot)?, fastest(back)?, fastest(restart)?);
    Ok(SwitchReport {
        switch_hot_ttft_ms: hot.ttft_ms,
        switch_back_ttft_ms: back.ttft_ms,
        restart_ttft_ms: restart.ttft_ms,
        switch_back_source: back.prompt_source,
        restart_source: restart.prompt_source,
        switch_back_ttft_ratio: back.ttft_ms / hot.ttft_ms,
        restart_ttft_ratio: restart.ttft_ms / hot.ttft_ms,
    })
}

/// The reply with the shortest TTFT of a measurement's rounds.
fn fastest(turns: Vec<ReplyStats>) -> Result<ReplyStats, BenchError> {
    turns.into_iter().min_by(|x, y| x.ttft_ms.total_cmp(&y.ttft_ms)).ok_or_else(|| BenchError::from("no round ran".to_owned()))
}

/// The A/B/A pattern on llama-server with its prompt cache in RAM.
pub async fn switch_server(args: &BenchArgs, binary: &Path) -> Result<SwitchServerReport, BenchError> {
    let extra = ["--cache-ram", SERVER_CACHE_RAM_MB];
    let server = LlamaServer::start(binary, &args.model, args.threads, N_CTX, N_BATCH, &extra).await?;
    let (mut a, mut b) = (ServerChat::new("A"), ServerChat::new("B"));
    a.turns(&server, SWITCH_TURNS - 1).await?;
    let (mut hot, mut back) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..SWITCH_ROUNDS {
        hot = hot.min(a.turns(&server, 1).await?);
        b.turns(&server, OTHER_TURNS).await?;
        back = back.min(a.turns(&server, 1).await?);
    }
    Ok(SwitchServerReport {
        server_cache_ram_switch_ttft_ratio: back / hot,
        server_switch_hot_ttft_ms: hot,
        server_switch_back_ttft_ms: back,
    })
}

/// A chat's turn `SWITCH_TURNS` typed at `TYPING_CPS`, the draft read ahead as the window's
/// composer sends it (`DRAFT_PACE`: at this pace, `quiet_ms` after each key), then sent one
/// keystroke after the last character: the reply's stats (TTFT as the caller sees it).
pub async fn typing(args: &BenchArgs, load: LoadParams) -> Result<TypingReport, BenchError> {
    let key_gap = Duration::from_secs_f64(1.0 / TYPING_CPS);
    if !DRAFT_PACE.sends_every_key(key_gap) {
        return Err(format!("the bench types at {TYPING_CPS} chars/s, faster than the composer sends a draft per key").into());
    }
    let engine = Engine::spawn();
    engine.load(&args.model, load).await.map_err(|e| e.to_string())?;
    let mut chat = Chat::new(CHAT_TYPED, "T");
    chat.turns(&engine, SWITCH_TURNS - 1).await?;
    let message: Vec<char> = chat_turn(chat.name, SWITCH_TURNS).chars().collect();
    for typed in 1..=message.len() {
        tokio::time::sleep(DRAFT_PACE.quiet()).await;
        let mut draft = chat.history.clone();
        draft.push(ChatMessage::new(Role::User, message[..typed].iter().collect::<String>()));
        let mut request = ReplyRequest::new(draft, SamplingParams::greedy(TURN_REPLY_TOKENS), CancelFlag::new());
        request.conversation = Some(chat.id);
        engine.prefill(request);
        tokio::time::sleep(key_gap - DRAFT_PACE.quiet()).await;
    }
    chat.history.push(ChatMessage::new(Role::User, message.iter().collect::<String>()));
    let (_, stats) = turn_in(&engine, &chat.history, TURN_REPLY_TOKENS, Some(chat.id)).await?;
    engine.shutdown();
    Ok(TypingReport { typing_ttft_ms: stats.ttft_ms, typing_source: stats.prompt_source })
}

/// One of the bench's conversations on the engine.
struct Chat {
    id: i64,
    name: &'static str,
    history: Vec<ChatMessage>,
}

impl Chat {
    fn new(id: i64, name: &'static str) -> Self {
        Chat { id, name, history: Vec::new() }
    }

    /// Answers `n` more turns; the last turn's stats.
    async fn turns(&mut self, engine: &Engine, n: usize) -> Result<ReplyStats, BenchError> {
        let mut last = ReplyStats::default();
        for _ in 0..n {
            self.history.push(ChatMessage::new(Role::User, chat_turn(self.name, self.history.len() / 2 + 1)));
            let (text, stats) = turn_in(engine, &self.history, TURN_REPLY_TOKENS, Some(self.id)).await?;
            self.history.push(ChatMessage::new(Role::Assistant, text));
            last = stats;
        }
        Ok(last)
    }
}

/// The same conversation on llama-server: its TTFTs.
struct ServerChat {
    name: &'static str,
    history: Vec<(&'static str, String)>,
}

impl ServerChat {
    fn new(name: &'static str) -> Self {
        ServerChat { name, history: Vec::new() }
    }

    async fn turns(&mut self, server: &LlamaServer, n: usize) -> Result<f64, BenchError> {
        let mut last = 0.0;
        for _ in 0..n {
            self.history.push(("user", chat_turn(self.name, self.history.len() / 2 + 1)));
            let messages: Vec<(&str, &str)> = self.history.iter().map(|(r, c)| (*r, c.as_str())).collect();
            let turn = server.reply(&messages, TURN_REPLY_TOKENS, true).await?;
            self.history.push(("assistant", turn.text));
            last = turn.ttft_ms;
        }
        Ok(last)
    }
}

/// Turn `n` of conversation `name`: conversations differ from their first token on.
fn chat_turn(name: &str, n: usize) -> String {
    format!("[{name}] {}", user_turn(n))
}
