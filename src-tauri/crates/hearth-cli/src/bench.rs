//! `hearth-cli bench`: the engine's speed against a raw llama-cpp-2 loop on the same model and
//! threads, and time to first token over a scripted conversation with KV reuse on and off, turn
//! by turn beside llama.cpp's own server with its prompt cache on and off.

use std::time::{Duration, Instant};

use serde::Serialize;

use hearth_core::{
    CancelFlag, ChatBackend, ChatMessage, DRAFT_PACE, GenEvent, PromptSource, ReplyRequest, ReplyStats, Role, SamplingParams,
};
use hearth_engine::bench::{RawSpeed, raw_llama_speed};
use hearth_engine::{Engine, HostProgram, LoadParams};

use crate::args::BenchArgs;
use crate::busy_core::{self, BusyCoreReport};
use crate::decoding::{self, DecodingReport};
use crate::parallel::{self, ParallelReport};
use crate::peer::{self, LlamaServer};

const N_CTX: u32 = 4096;
const N_BATCH: u32 = 512;
const DECODE_TOKENS: u32 = 128;
/// Alternating raw/engine measurements; each side reports its best.
const ROUNDS: usize = 3;
/// Reply length per scripted turn (end of turn is ignored so every turn has exactly this).
const TURN_REPLY_TOKENS: u32 = 48;
/// Pause between the engine's turn and the server's, so neither side's idle worker threads
/// (OpenMP spins a while after a parallel region) eat into the other's time.
const SETTLE: Duration = Duration::from_millis(250);
/// Runs of the conversation with reuse; each turn reports its fastest.
const REUSE_ROUNDS: usize = 3;

#[derive(Serialize)]
struct Report {
    threads: u32,
    prompt_tokens: u32,
    raw_prefill_tps: f64,
    engine_prefill_tps: f64,
    prefill_ratio: f64,
    raw_decode_tps: f64,
    engine_decode_tps: f64,
    decode_ratio: f64,
    /// Time to first token as the caller sees it (request sent → first text), per turn.
    ttft_ms_reuse: Vec<f64>,
    ttft_ms_no_reuse: Vec<f64>,
    cached_tokens: Vec<u32>,
    prompt_tokens_per_turn: Vec<u32>,
    /// llama.cpp's server in the same run (absent with --no-server or when none is built).
    server: Option<ServerReport>,
    /// A long chat switched away from and back to, and reopened after a restart.
    #[serde(flatten)]
    switch: SwitchReport,
    /// Four clients at once on Hearth's server, beside llama-server with four slots.
    #[serde(flatten)]
    parallel: ParallelReport,
    /// Decoding strategies against plain sampling on the same engine.
    #[serde(flatten)]
    decoding: DecodingReport,
    /// Writing while another program keeps a core busy: measured decode threads vs every core.
    #[serde(flatten)]
    busy_core: BusyCoreReport,
}

/// Chat A (`SWITCH_TURNS` turns) answered hot, then after chat B answered, then after the
/// engine restarted; llama-server (one slot, `--cache-ram`) on the same A/B/A pattern.
#[derive(Serialize)]
struct SwitchReport {
    switch_hot_ttft_ms: f64,
    switch_back_ttft_ms: f64,
    restart_ttft_ms: f64,
    /// Where the engine's prompt came from at the switch back and after the restart.
    switch_back_source: PromptSource,
    restart_source: PromptSource,
    switch_back_ttft_ratio: f64,
    restart_ttft_ratio: f64,
    /// llama-server's switch-back TTFT ÷ its hot TTFT (absent without a server).
    server_cache_ram_switch_ttft_ratio: Option<f64>,
    server_switch_hot_ttft_ms: Option<f64>,
    server_switch_back_ttft_ms: Option<f64>,
    /// Turn 20 of a chat typed at `TYPING_CPS` characters a second with the draft read ahead
    /// as the app's composer sends it: TTFT after Enter, and where its prompt came from.
    typing_ttft_ms: f64,
    typing_source: PromptSource,
}

#[derive(Serialize)]
struct ServerReport {
    binary: String,
    ttft_ms_cache: Vec<f64>,
    ttft_ms_no_cache: Vec<f64>,
    cached_tokens: Vec<u32>,
    /// Hearth with reuse ÷ server with its cache, per turn (≤ 1 is the goal at every turn).
    ttft_ratio_vs_cached_server: Vec<f64>,
}

pub async fn run(args: BenchArgs) -> Result<(), String> {
    let load =
        |reuse_kv| LoadParams { n_ctx: Some(N_CTX), n_threads: Some(args.threads), n_batch: N_BATCH, reuse_kv, ..LoadParams::default() };
    let prompt = long_prompt();

    // The raw loop runs in a child process: llama.cpp's OpenMP threads from one run slow the
    // next run in the same process down (whichever runs second loses about half its decode
    // speed), so each side gets a process of its own. Raw and engine alternate for ROUNDS rounds
    // and each side keeps its best, so a noisy moment on a shared machine hits neither alone.
    let engine = Engine::spawn();
    engine.load(&args.model, load(false)).await.map_err(|e| e.to_string())?;
    let one_turn = [ChatMessage::new(Role::User, prompt)];
    turn(&engine, &one_turn, 16).await?;
    let (mut raw_prefill, mut raw_decode, mut engine_prefill, mut engine_decode) = (0f64, 0f64, 0f64, 0f64);
    let mut prompt_tokens = 0;
    for _ in 0..ROUNDS {
        let raw = raw_in_child(&args)?;
        raw_prefill = raw_prefill.max(raw.prefill_tps);
        raw_decode = raw_decode.max(raw.decode_tps);
        let measured = turn(&engine, &one_turn, DECODE_TOKENS).await?;
        prompt_tokens = measured.prompt_tokens;
        engine_prefill = engine_prefill.max(f64::from(measured.prompt_tokens) / (measured.ttft_ms / 1000.0));
        engine_decode = engine_decode.max(measured.decode_tps);
    }

    // Each conversation gets a fresh server, as the engine gets a fresh load: neither side may
    // start with the other run's turns in its cache.
    let binary = if args.no_server { None } else { peer::find_binary(args.server.clone()) };
    let server = fresh_server(binary.as_deref(), &args).await?;
    let (ttft_no_reuse, server_no_cache) = conversation(&engine, server.as_ref(), args.turns).await?;
    drop(server);
    let mut server_cache = Vec::new();
    // With reuse each turn takes well under a second, so a moment of machine noise can double
    // one turn's figure: the reuse conversation runs REUSE_ROUNDS times (fresh load and fresh
    // server each time) and each turn keeps its fastest time on each side, noise only ever
    // adding time.
    let (mut engine_rounds, mut server_rounds) = (Vec::new(), Vec::new());
    let mut ttft_reuse = Vec::new();
    for _ in 0..REUSE_ROUNDS {
        engine.load(&args.model, load(true)).await.map_err(|e| e.to_string())?;
        let server = fresh_server(binary.as_deref(), &args).await?;
        let (stats, server_turns) = conversation(&engine, server.as_ref(), args.turns).await?;
        engine_rounds.push(stats.iter().map(|s| s.ttft_ms).collect::<Vec<_>>());
        server_rounds.push(server_turns.iter().map(|s| s.ttft_ms).collect::<Vec<_>>());
        ttft_reuse = stats;
        if server.is_some() {
            server_cache = server_turns;
        }
    }
    for (turn, fastest) in ttft_reuse.iter_mut().zip(fastest_per_turn(&engine_rounds)) {
        turn.ttft_ms = fastest;
    }
    for (turn, fastest) in server_cache.iter_mut().zip(fastest_per_turn(&server_rounds)) {
        turn.ttft_ms = fastest;
    }
    let server = binary.clone().map(|binary| ServerReport {
        binary: binary.display().to_string(),
        ttft_ratio_vs_cached_server: ttft_reuse.iter().zip(&server_cache).map(|(h, s)| h.ttft_ms / s.ttft_ms).collect(),
        ttft_ms_cache: server_cache.iter().map(|s| s.ttft_ms).collect(),
        ttft_ms_no_cache: server_no_cache.iter().map(|s| s.ttft_ms).collect(),
        cached_tokens: server_cache.iter().map(|s| s.cached_tokens).collect(),
    });

    let switch = switch_back(&args, binary.as_deref(), load(true)).await?;
    let parallel = parallel::run(&args, load(true), N_CTX, binary.as_deref()).await?;
    engine.load(&args.model, load(true)).await.map_err(|e| e.to_string())?;
    let decoding = decoding::run(&engine, args.draft.as_deref()).await?;
    engine.shutdown();
    let busy_core = busy_core::run(&args, load(true)).await?;
    let report = Report {
        threads: args.threads,
        prompt_tokens,
        raw_prefill_tps: raw_prefill,
        engine_prefill_tps: engine_prefill,
        prefill_ratio: engine_prefill / raw_prefill,
        raw_decode_tps: raw_decode,
        engine_decode_tps: engine_decode,
        decode_ratio: engine_decode / raw_decode,
        ttft_ms_reuse: ttft_reuse.iter().map(|s| s.ttft_ms).collect(),
        ttft_ms_no_reuse: ttft_no_reuse.iter().map(|s| s.ttft_ms).collect(),
        cached_tokens: ttft_reuse.iter().map(|s| s.cached_tokens).collect(),
        prompt_tokens_per_turn: ttft_reuse.iter().map(|s| s.prompt_tokens).collect(),
        server,
        switch,
        parallel,
        decoding,
        busy_core,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("report serializes"));
    } else {
        print_table(&report);
    }
    Ok(())
}

/// Turns of chat A before it is left for chat B.
const SWITCH_TURNS: usize = 20;
/// Turns of chat B, enough to fill the live cache with another conversation.
const OTHER_TURNS: usize = 3;
/// Repeats of the hot / switch-back and of the restart measurement; each keeps its fastest (a
/// moment of machine noise only ever adds time). Chat A stays within the context throughout.
const SWITCH_ROUNDS: usize = 2;
/// Chat ids of the two conversations.
const CHAT_A: i64 = 1;
const CHAT_B: i64 = 2;
/// llama-server's prompt cache in RAM for the A/B/A pattern (MiB).
const SERVER_CACHE_RAM_MB: &str = "4096";

/// The A/B/A pattern: A's hot turn, B's turns, A's switch-back turn, then a restart of the engine
/// (its caches on disk) and A's next turn; `SWITCH_ROUNDS` times each.
async fn switch_back(args: &BenchArgs, server: Option<&std::path::Path>, load: LoadParams) -> Result<SwitchReport, String> {
    let load_for_typing = load.clone();
    let kv_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
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
    let fastest = |turns: Vec<ReplyStats>| turns.into_iter().min_by(|x, y| x.ttft_ms.total_cmp(&y.ttft_ms)).expect("rounds ran");
    let (hot, back, restart) = (fastest(hot), fastest(back), fastest(restart));

    let server_ratio = match server {
        Some(binary) => {
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
            Some((hot, back))
        }
        None => None,
    };
    let typing = typing(args, load_for_typing).await?;
    Ok(SwitchReport {
        typing_ttft_ms: typing.ttft_ms,
        typing_source: typing.prompt_source,
        switch_hot_ttft_ms: hot.ttft_ms,
        switch_back_ttft_ms: back.ttft_ms,
        restart_ttft_ms: restart.ttft_ms,
        switch_back_source: back.prompt_source,
        restart_source: restart.prompt_source,
        switch_back_ttft_ratio: back.ttft_ms / hot.ttft_ms,
        restart_ttft_ratio: restart.ttft_ms / hot.ttft_ms,
        server_cache_ram_switch_ttft_ratio: server_ratio.map(|(hot, back)| back / hot),
        server_switch_hot_ttft_ms: server_ratio.map(|(hot, _)| hot),
        server_switch_back_ttft_ms: server_ratio.map(|(_, back)| back),
    })
}

/// How fast the bench's user types (characters a second).
const TYPING_CPS: f64 = 5.0;

/// A chat's turn `SWITCH_TURNS` typed at `TYPING_CPS`, the draft read ahead as the window's
/// composer sends it (`DRAFT_PACE`: at this pace, `quiet_ms` after each key), then sent one
/// keystroke after the last character: the reply's stats (TTFT as the caller sees it).
async fn typing(args: &BenchArgs, load: LoadParams) -> Result<ReplyStats, String> {
    let key_gap = Duration::from_secs_f64(1.0 / TYPING_CPS);
    if !DRAFT_PACE.sends_every_key(key_gap) {
        return Err(format!("the bench types at {TYPING_CPS} chars/s, faster than the composer sends a draft per key"));
    }
    let engine = Engine::spawn();
    engine.load(&args.model, load).await.map_err(|e| e.to_string())?;
    let mut chat = Chat::new(3, "T");
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
    Ok(stats)
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
    async fn turns(&mut self, engine: &Engine, n: usize) -> Result<ReplyStats, String> {
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

    async fn turns(&mut self, server: &LlamaServer, n: usize) -> Result<f64, String> {
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

/// Runs `hearth-cli bench-raw` and reads its JSON.
fn raw_in_child(args: &BenchArgs) -> Result<RawSpeed, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let output = std::process::Command::new(exe)
        .args(["bench-raw", "--model"])
        .arg(&args.model)
        .args(["--threads", &args.threads.to_string()])
        .output()
        .map_err(|e| format!("cannot start the raw benchmark: {e}"))?;
    if !output.status.success() {
        return Err(format!("raw benchmark failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("raw benchmark printed no result: {e}"))
}

/// `hearth-cli bench-raw`: the baseline alone, warmed up once, as JSON on stdout.
pub fn run_raw(args: BenchArgs) -> Result<(), String> {
    let prompt = long_prompt();
    raw_llama_speed(&args.model, args.threads, N_CTX, N_BATCH, &prompt, 16).map_err(|e| e.to_string())?;
    let speed = raw_llama_speed(&args.model, args.threads, N_CTX, N_BATCH, &prompt, DECODE_TOKENS as usize).map_err(|e| e.to_string())?;
    println!("{}", serde_json::to_string(&speed).expect("serializes"));
    Ok(())
}

fn print_table(r: &Report) {
    println!("threads {}, prompt {} tokens", r.threads, r.prompt_tokens);
    println!("{:<10} {:>12} {:>12} {:>8}", "", "raw tok/s", "engine tok/s", "ratio");
    println!("{:<10} {:>12.1} {:>12.1} {:>8.3}", "prefill", r.raw_prefill_tps, r.engine_prefill_tps, r.prefill_ratio);
    println!("{:<10} {:>12.1} {:>12.1} {:>8.3}", "decode", r.raw_decode_tps, r.engine_decode_tps, r.decode_ratio);
    println!("\nTTFT in ms, request sent → first text");
    println!(
        "{:>4} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "turn", "prompt", "cached", "reuse", "no reuse", "srv cache", "srv none", "÷ srv"
    );
    for i in 0..r.ttft_ms_reuse.len() {
        let server = |pick: fn(&ServerReport) -> &Vec<f64>| r.server.as_ref().map_or(f64::NAN, |s| pick(s)[i]);
        println!(
            "{:>4} {:>7} {:>7} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>7.3}",
            i + 1,
            r.prompt_tokens_per_turn[i],
            r.cached_tokens[i],
            r.ttft_ms_reuse[i],
            r.ttft_ms_no_reuse[i],
            server(|s| &s.ttft_ms_cache),
            server(|s| &s.ttft_ms_no_cache),
            server(|s| &s.ttft_ratio_vs_cached_server),
        );
    }
    let s = &r.switch;
    println!("\nChat A after {SWITCH_TURNS} turns: TTFT in ms");
    println!(
        "  hot {:.0}, after chat B {:.0} ({:?}, ÷ hot {:.2}), after a restart {:.0} ({:?}, ÷ hot {:.2})",
        s.switch_hot_ttft_ms,
        s.switch_back_ttft_ms,
        s.switch_back_source,
        s.switch_back_ttft_ratio,
        s.restart_ttft_ms,
        s.restart_source,
        s.restart_ttft_ratio
    );
    println!(
        "  turn {SWITCH_TURNS} typed at {TYPING_CPS} characters/s, read ahead: TTFT {:.0} ms ({:?})",
        s.typing_ttft_ms, s.typing_source
    );
    if let (Some(hot), Some(back), Some(ratio)) =
        (s.server_switch_hot_ttft_ms, s.server_switch_back_ttft_ms, s.server_cache_ram_switch_ttft_ratio)
    {
        println!("  llama-server --cache-ram: hot {hot:.0}, after chat B {back:.0} (÷ hot {ratio:.2})");
    }
    let p = &r.parallel;
    println!(
        "\nHearth's server, 4 clients at once: {:.1} tok/s, one at a time {:.1} (÷ {:.2}); replies as alone: {}",
        p.parallel4_tps, p.single_client_tps, p.parallel4_vs_single, p.parallel4_outputs_identical
    );
    if let (Some(server), Some(ratio)) = (p.server_parallel4_tps, p.parallel4_vs_server) {
        println!("  llama-server --parallel 4: {server:.1} tok/s at once (Hearth ÷ server {ratio:.2})");
    }
    let d = &r.decoding;
    println!(
        "\nPrompt lookup: edit {:.1} tok/s vs {:.1} plain (× {:.2}, {:.0} % of drafts kept), free chat {:.1} vs {:.1} (× {:.2}); same replies: {}",
        d.lookup_edit_tps,
        d.plain_edit_tps,
        d.lookup_speedup_edit,
        d.lookup_acceptance_edit * 100.0,
        d.lookup_chat_tps,
        d.plain_chat_tps,
        d.lookup_speedup_chat,
        d.lookup_outputs_identical
    );
    if let Some(m) = &d.draft_model {
        println!(
            "Draft model: edit × {:.2} ({:.0} % of drafts kept), free chat × {:.2} ({:.0} %); same replies: {}",
            m.draft_speedup_edit,
            m.draft_acceptance_edit * 100.0,
            m.draft_speedup_chat,
            m.draft_acceptance_chat * 100.0,
            m.draft_outputs_identical
        );
    }
    println!("Consensus of 8: {:.0} ms vs one sampled reply {:.0} ms (× {:.2})", d.mbr8_ms, d.single_sampled_ms, d.mbr8_time_ratio);
    let b = &r.busy_core;
    println!(
        "\nA core kept busy by another program: {:.1} tok/s with measured decode threads, {:.1} with every core (× {:.2}); \
         nothing else running: measured ÷ every core {:.2}",
        b.busy_core_decode_tps, b.busy_core_fixed_threads_decode_tps, b.busy_core_speedup, b.quiet_tuned_decode_ratio
    );
}

/// The smallest value at each position across rounds.
fn fastest_per_turn(rounds: &[Vec<f64>]) -> Vec<f64> {
    let turns = rounds.iter().map(Vec::len).min().unwrap_or(0);
    (0..turns).map(|t| rounds.iter().map(|r| r[t]).fold(f64::INFINITY, f64::min)).collect()
}

async fn fresh_server(binary: Option<&std::path::Path>, args: &BenchArgs) -> Result<Option<LlamaServer>, String> {
    match binary {
        Some(binary) => LlamaServer::start(binary, &args.model, args.threads, N_CTX, N_BATCH, &[]).await.map(Some),
        None => Ok(None),
    }
}

/// `turns` scripted turns of about 70 new tokens each, each reply exactly 48 tokens. With a
/// server, it answers each turn of its own copy of the conversation right after the engine
/// (cache on when the engine is loaded with reuse), so both sides meet the same moment's machine.
async fn conversation(
    engine: &Engine,
    server: Option<&LlamaServer>,
    turns: usize,
) -> Result<(Vec<ReplyStats>, Vec<peer::ServerTurn>), String> {
    let reuse = engine.loaded().is_some_and(|m| m.load.reuse_kv);
    let (mut history, mut server_history) = (Vec::new(), Vec::<(&str, String)>::new());
    let (mut stats, mut server_turns) = (Vec::new(), Vec::new());
    // One short untimed exchange first: the first decode after a load pays one-off costs
    // (page faults into the weights, compute buffers) that no later turn pays.
    const WARM_UP: &str = "Hello!";
    turn(engine, &[ChatMessage::new(Role::User, WARM_UP)], 4).await?;
    if let Some(server) = server {
        server.reply(&[("user", WARM_UP)], 4, reuse).await?;
    }
    for n in 1..=turns {
        history.push(ChatMessage::new(Role::User, user_turn(n)));
        let (text, s) = turn_text(engine, &history, TURN_REPLY_TOKENS).await?;
        history.push(ChatMessage::new(Role::Assistant, text));
        stats.push(s);
        if let Some(server) = server {
            tokio::time::sleep(SETTLE).await;
            server_history.push(("user", user_turn(n)));
            let messages: Vec<(&str, &str)> = server_history.iter().map(|(r, c)| (*r, c.as_str())).collect();
            let turn = server.reply(&messages, TURN_REPLY_TOKENS, reuse).await?;
            server_history.push(("assistant", turn.text.clone()));
            server_turns.push(turn);
            tokio::time::sleep(SETTLE).await;
        }
    }
    Ok((stats, server_turns))
}

async fn turn(engine: &Engine, history: &[ChatMessage], max_tokens: u32) -> Result<ReplyStats, String> {
    turn_text(engine, history, max_tokens).await.map(|(_, s)| s)
}

async fn turn_text(engine: &Engine, history: &[ChatMessage], max_tokens: u32) -> Result<(String, ReplyStats), String> {
    turn_in(engine, history, max_tokens, None).await
}

/// One greedy reply of exactly `max_tokens` tokens in `conversation`.
async fn turn_in(
    engine: &Engine,
    history: &[ChatMessage],
    max_tokens: u32,
    conversation: Option<i64>,
) -> Result<(String, ReplyStats), String> {
    let sampling = SamplingParams { ignore_eos: true, ..SamplingParams::greedy(max_tokens) };
    reply_with(engine, history, sampling, conversation).await
}

/// One reply with these settings: its text, and its stats with TTFT as the caller saw it.
pub async fn reply_with(
    engine: &Engine,
    history: &[ChatMessage],
    sampling: SamplingParams,
    conversation: Option<i64>,
) -> Result<(String, ReplyStats), String> {
    let mut request = ReplyRequest::new(history.to_vec(), sampling, CancelFlag::new());
    request.conversation = conversation;
    let started = Instant::now();
    let mut stream = engine.start_reply(request).map_err(|e| e.to_string())?;
    let mut text = String::new();
    let mut ttft_ms = 0.0;
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(d) => {
                if text.is_empty() {
                    ttft_ms = started.elapsed().as_secs_f64() * 1000.0;
                }
                text.push_str(&d);
            }
            // The caller's view of TTFT (as for the server), not the engine's own.
            GenEvent::Finished { stats, .. } => return Ok((text, ReplyStats { ttft_ms, ..stats })),
            GenEvent::Failed(e) => return Err(e.to_string()),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) => {}
        }
    }
    Err("the engine stopped unexpectedly".into())
}

fn user_turn(n: usize) -> String {
    format!(
        "Question {n}: I am planning a small vegetable garden behind my house this spring. The soil is \
         heavy clay, the spot gets about six hours of sun, and I have little time on weekdays. Which \
         three vegetables would you grow first, and how should I prepare the bed before planting them?"
    )
}

/// About 500 tokens of ordinary prose for the prefill measurement.
fn long_prompt() -> String {
    let paragraph = "The history of bread is the history of people settling down. Grain that could be \
        stored through winter let villages grow, and the oven became the warm centre of the house. \
        Bakers learned to keep a piece of yesterday's dough to raise today's loaf, long before anyone \
        knew that yeast was alive. ";
    format!("Summarise the following text.\n\n{}", paragraph.repeat(8))
}
