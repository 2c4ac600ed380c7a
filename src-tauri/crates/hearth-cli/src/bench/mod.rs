//! `hearth-cli bench`: the engine's speed against a raw llama-cpp-2 loop on the same model and
//! threads, and time to first token over a scripted conversation with KV reuse on and off, turn
//! by turn beside llama.cpp's own server with its prompt cache on and off — and the sections
//! after them (switching chats, typing, four clients, decoding strategies, a busy core).
//!
//! Each section runs on an engine (and servers) of its own and reports its figures or what failed:
//! a failed request costs that section's figures, never the report. The exit status says whether
//! any section failed (or, with `--compare`, whether a figure regressed).

use std::time::Instant;

use serde::Serialize;

use hearth_core::{ChatMessage, Offload, ReplyStats, Role};
use hearth_engine::bench::{RawSpeed, raw_llama_speed};
use hearth_engine::{Engine, LoadParams};

use crate::args::BenchArgs;
use crate::attach_round::{self, AttachReport};
use crate::bench_kit::{BenchError, N_BATCH, N_CTX, Section, TURN_REPLY_TOKENS, turn_in, user_turn};
use crate::busy_core::{self, BusyCoreReport};
use crate::check::{self, Baseline, CheckReport};
use crate::decoding::{self, DecodingReport};
use crate::parallel::{self, ParallelReport};
use crate::peer::{self, LlamaServer, PeerError};
use crate::retrieve_round::{self, RetrieveReport};
use crate::switch::{self, SwitchReport, SwitchServerReport, TypingReport};
use crate::tools_round::{self, ToolsReport};

mod table;

const DECODE_TOKENS: u32 = 128;
/// Alternating raw/engine measurements; each side reports its best.
const ROUNDS: usize = 3;
/// Pause between the engine's turn and the server's, so neither side's idle worker threads
/// (OpenMP spins a while after a parallel region) eat into the other's time.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(250);
/// Runs of the conversation with reuse; each turn reports its fastest.
const REUSE_ROUNDS: usize = 3;

/// A failed section in the report: what failed and, for a server, which one, which request, the
/// status and its last lines of output.
#[derive(Serialize)]
pub struct SectionFailure {
    pub section: &'static str,
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_log: Vec<String>,
}

impl SectionFailure {
    fn new(section: Section, error: BenchError) -> Self {
        let section = section.name();
        match error {
            BenchError::Bench(error) => {
                SectionFailure { section, error, server: None, request: None, status: None, server_log: Vec::new() }
            }
            BenchError::Peer(e) => SectionFailure {
                section,
                error: e.error,
                server: Some(e.server),
                request: e.request,
                status: e.status,
                server_log: e.server_log,
            },
        }
    }
}

/// Every section's figures (flat, as the sections name them), absent for a section that failed or
/// was not run.
#[derive(Serialize)]
pub struct Report {
    /// The checkout's commit (`git describe`), when the bench runs from one.
    pub commit: String,
    pub threads: u32,
    /// Where the model ran: the backend (`CPU`, `CUDA`, `Vulkan`), its device, and the model's
    /// layers on that device (0: the CPU alone).
    pub backend: String,
    pub device: String,
    pub gpu_layers: u32,
    /// Each section run, in order, with its wall time.
    pub section_seconds: Vec<(&'static str, f64)>,
    pub failed_sections: Vec<SectionFailure>,
    #[serde(flatten)]
    pub speed: Option<SpeedReport>,
    #[serde(flatten)]
    pub conversation: Option<ConversationReport>,
    #[serde(flatten)]
    pub switch: Option<SwitchReport>,
    #[serde(flatten)]
    pub switch_server: Option<SwitchServerReport>,
    #[serde(flatten)]
    pub typing: Option<TypingReport>,
    #[serde(flatten)]
    pub parallel: Option<ParallelReport>,
    #[serde(flatten)]
    pub decoding: Option<DecodingReport>,
    #[serde(flatten)]
    pub busy_core: Option<BusyCoreReport>,
    #[serde(flatten)]
    pub tools: Option<ToolsReport>,
    #[serde(flatten)]
    pub attach: Option<AttachReport>,
    #[serde(flatten)]
    pub retrieve: Option<RetrieveReport>,
    #[serde(flatten)]
    pub across: Across,
    /// With `--compare FILE`: each recorded figure against this run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckReport>,
}

/// The engine against the raw loop.
#[derive(Serialize)]
pub struct SpeedReport {
    pub prompt_tokens: u32,
    pub raw_prefill_tps: f64,
    pub engine_prefill_tps: f64,
    pub prefill_ratio: f64,
    pub raw_decode_tps: f64,
    pub engine_decode_tps: f64,
    pub decode_ratio: f64,
}

/// The scripted conversation with reuse on and off, beside llama-server.
#[derive(Serialize)]
pub struct ConversationReport {
    /// Time to first token as the caller sees it (request sent → first text), per turn.
    pub ttft_ms_reuse: Vec<f64>,
    pub ttft_ms_no_reuse: Vec<f64>,
    pub cached_tokens: Vec<u32>,
    pub prompt_tokens_per_turn: Vec<u32>,
    /// llama.cpp's server in the same run (absent with --no-server or when none is built).
    pub server: Option<ServerReport>,
    /// The median over the turns of Hearth with reuse ÷ the server with its cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_vs_cached_server_median: Option<f64>,
}

#[derive(Serialize)]
pub struct ServerReport {
    pub binary: String,
    pub ttft_ms_cache: Vec<f64>,
    pub ttft_ms_no_cache: Vec<f64>,
    pub cached_tokens: Vec<u32>,
    /// Hearth with reuse ÷ server with its cache, per turn (≤ 1 is the goal at every turn).
    pub ttft_ratio_vs_cached_server: Vec<f64>,
}

/// Ratios between sections: each TTFT against one measured in the same run, so that a slower
/// machine moves neither.
#[derive(Serialize, Default)]
pub struct Across {
    /// Chat A's hot TTFT ÷ llama-server's on the same pattern.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_hot_vs_server_ratio: Option<f64>,
    /// TTFT after typing with read-ahead ÷ chat A's hot TTFT (the same context length).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typing_ttft_vs_hot: Option<f64>,
}

impl Across {
    fn of(report: &Report) -> Across {
        let hot = report.switch.as_ref().map(|s| s.switch_hot_ttft_ms);
        Across {
            switch_hot_vs_server_ratio: hot.zip(report.switch_server.as_ref()).map(|(hot, s)| hot / s.server_switch_hot_ttft_ms),
            typing_ttft_vs_hot: hot.zip(report.typing.as_ref()).map(|(hot, t)| t.typing_ttft_ms / hot),
        }
    }
}

fn load_params(args: &BenchArgs, reuse_kv: bool) -> LoadParams {
    LoadParams {
        n_ctx: Some(N_CTX),
        n_threads: Some(args.threads),
        n_batch: N_BATCH,
        reuse_kv,
        flash_attention: args.flash_attention,
        kv_cache_type: args.kv_cache_type,
        ..LoadParams::default()
    }
}

pub async fn run(args: BenchArgs) -> Result<(), String> {
    // A file that cannot be compared with fails now, not after the whole bench.
    let baseline = args.compare.as_deref().map(Baseline::read).transpose()?;
    let binary = if args.no_server { None } else { peer::find_binary(args.server.clone()) };
    let offload = offload(&args).await;
    eprintln!(
        "bench: the model runs on {} ({}), {} of {} layers there",
        offload.device, offload.backend, offload.gpu_layers, offload.total_layers
    );
    let mut report = Report {
        commit: commit(),
        threads: args.threads,
        backend: offload.backend,
        device: offload.device,
        gpu_layers: offload.gpu_layers,
        section_seconds: Vec::new(),
        failed_sections: Vec::new(),
        speed: None,
        conversation: None,
        switch: None,
        switch_server: None,
        typing: None,
        parallel: None,
        decoding: None,
        busy_core: None,
        tools: None,
        attach: None,
        retrieve: None,
        across: Across::default(),
        check: None,
    };
    fn keep<T>(slot: &mut Option<T>, outcome: Result<T, BenchError>) -> Result<(), BenchError> {
        *slot = Some(outcome?);
        Ok(())
    }
    // The engine's figures stay when the server beside it failed.
    fn keep_beside<T, E: Into<BenchError>>(slot: &mut Option<T>, outcome: Result<(T, Option<PeerError>), E>) -> Result<(), BenchError> {
        let (figures, lost) = outcome.map_err(Into::into)?;
        *slot = Some(figures);
        lost.map_or(Ok(()), |e| Err(e.into()))
    }
    for &section in &args.sections {
        eprintln!("bench: {} …", section.name());
        let started = Instant::now();
        let r = &mut report;
        let outcome = match section {
            Section::Speed => keep(&mut r.speed, speed(&args).await),
            Section::Conversation => keep_beside(&mut r.conversation, conversation_section(&args, binary.as_deref()).await),
            Section::Switch => keep(&mut r.switch, switch::switch_back(&args, load_params(&args, true)).await),
            Section::SwitchServer => match &binary {
                Some(binary) => keep(&mut r.switch_server, switch::switch_server(&args, binary).await),
                None => Ok(()),
            },
            Section::Typing => keep(&mut r.typing, switch::typing(&args, load_params(&args, true)).await),
            Section::Parallel => keep(&mut r.parallel, parallel::run(&args, load_params(&args, true), N_CTX, binary.as_deref()).await),
            Section::Decoding => keep(&mut r.decoding, decoding_section(&args).await),
            Section::BusyCore => keep(&mut r.busy_core, busy_core::run(&args, load_params(&args, true)).await.map_err(BenchError::from)),
            Section::Tools => keep_beside(&mut r.tools, tools_round::run(&args, load_params(&args, true), binary.as_deref()).await),
            Section::Attach => keep_beside(&mut r.attach, attach_round::run(&args, load_params(&args, true), binary.as_deref()).await),
            Section::Retrieve => keep(&mut r.retrieve, retrieve_round::run().await.map_err(BenchError::from)),
        };
        let seconds = started.elapsed().as_secs_f64();
        report.section_seconds.push((section.name(), (seconds * 10.0).round() / 10.0));
        if let Err(e) = outcome {
            eprintln!("bench: {} failed after {seconds:.0} s: {e}", section.name());
            report.failed_sections.push(SectionFailure::new(section, e));
        }
    }
    report.across = Across::of(&report);
    let figures = serde_json::to_value(&report).map_err(|e| format!("the report does not serialize: {e}"))?;
    if let Some(baseline) = &baseline {
        report.check = Some(baseline.compare(&figures));
    }
    if let Some(file) = &args.record {
        Baseline::record(file, &figures, &report.commit)?;
        eprintln!("bench: recorded this run's figures in {}", file.display());
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).map_err(|e| format!("the report does not serialize: {e}"))?);
    } else {
        table::print(&report);
    }
    if let Some(check) = &report.check {
        check::print(check);
    }
    verdict(&report)
}

/// Where the engine puts the model with the bench's settings (one load, before the sections).
async fn offload(args: &BenchArgs) -> Offload {
    let engine = Engine::spawn();
    match engine.load(&args.model, load_params(args, false)).await {
        Ok(info) => info.offload,
        Err(e) => Offload::cpu(0, "unknown (the model did not load)").with_fallback(e.to_string()),
    }
}

/// The commit the bench was built from, as `git describe --always --dirty` says it.
fn commit() -> String {
    std::process::Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map_or_else(|| "unknown".to_owned(), |out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Failed sections and regressed figures, in words: the bench's exit status.
fn verdict(report: &Report) -> Result<(), String> {
    let mut wrong = Vec::new();
    if !report.failed_sections.is_empty() {
        let names: Vec<&str> = report.failed_sections.iter().map(|f| f.section).collect();
        wrong.push(format!("{} section(s) failed: {}", names.len(), names.join(", ")));
    }
    if let Some(check) = &report.check
        && !check.regressed.is_empty()
    {
        wrong.push(format!("{} figure(s) regressed: {}", check.regressed.len(), check.regressed.join(", ")));
    }
    if wrong.is_empty() { Ok(()) } else { Err(wrong.join("; ")) }
}

/// The raw loop and the engine on one long prompt. The raw loop runs in a child process:
/// llama.cpp's OpenMP threads from one run slow the next run in the same process down (whichever
/// runs second loses about half its decode speed), so each side gets a process of its own. Raw and
/// engine alternate for ROUNDS rounds and each side keeps its best, so a noisy moment on a shared
/// machine hits neither alone.
async fn speed(args: &BenchArgs) -> Result<SpeedReport, BenchError> {
    let engine = Engine::spawn();
    engine.load(&args.model, load_params(args, false)).await.map_err(|e| e.to_string())?;
    let one_turn = [ChatMessage::new(Role::User, long_prompt())];
    turn(&engine, &one_turn, 16).await?;
    let (mut raw_prefill, mut raw_decode, mut engine_prefill, mut engine_decode) = (0f64, 0f64, 0f64, 0f64);
    let mut prompt_tokens = 0;
    for _ in 0..ROUNDS {
        let raw = raw_in_child(args)?;
        raw_prefill = raw_prefill.max(raw.prefill_tps);
        raw_decode = raw_decode.max(raw.decode_tps);
        let measured = turn(&engine, &one_turn, DECODE_TOKENS).await?;
        prompt_tokens = measured.prompt_tokens;
        engine_prefill = engine_prefill.max(f64::from(measured.prompt_tokens) / (measured.ttft_ms / 1000.0));
        engine_decode = engine_decode.max(measured.decode_tps);
    }
    engine.shutdown();
    Ok(SpeedReport {
        prompt_tokens,
        raw_prefill_tps: raw_prefill,
        engine_prefill_tps: engine_prefill,
        prefill_ratio: engine_prefill / raw_prefill,
        raw_decode_tps: raw_decode,
        engine_decode_tps: engine_decode,
        decode_ratio: engine_decode / raw_decode,
    })
}

/// The scripted conversation without reuse, then `REUSE_ROUNDS` times with it, each beside a fresh
/// llama-server (cache off, then on). Each conversation gets a fresh server, as the engine gets a
/// fresh load: neither side may start with the other run's turns in its cache. A server that
/// fails is left out from then on: the engine's figures are still reported, with the server's
/// failure beside them.
async fn conversation_section(
    args: &BenchArgs,
    binary: Option<&std::path::Path>,
) -> Result<(ConversationReport, Option<PeerError>), BenchError> {
    let engine = Engine::spawn();
    engine.load(&args.model, load_params(args, false)).await.map_err(|e| e.to_string())?;
    let mut lost = None;
    let mut server = fresh_server(binary, args, &mut lost).await;
    let (ttft_no_reuse, server_no_cache) = conversation(&engine, &mut server, &mut lost, args.turns).await?;
    drop(server);
    let mut server_cache = Vec::new();
    // With reuse each turn takes well under a second, so a moment of machine noise can double
    // one turn's figure: the reuse conversation runs REUSE_ROUNDS times (fresh load and fresh
    // server each time) and each turn keeps its fastest time on each side, noise only ever
    // adding time.
    let (mut engine_rounds, mut server_rounds) = (Vec::new(), Vec::new());
    let mut ttft_reuse = Vec::new();
    for _ in 0..REUSE_ROUNDS {
        engine.load(&args.model, load_params(args, true)).await.map_err(|e| e.to_string())?;
        let mut server = fresh_server(binary, args, &mut lost).await;
        let (stats, server_turns) = conversation(&engine, &mut server, &mut lost, args.turns).await?;
        engine_rounds.push(stats.iter().map(|s| s.ttft_ms).collect::<Vec<_>>());
        server_rounds.push(server_turns.iter().map(|s| s.ttft_ms).collect::<Vec<_>>());
        ttft_reuse = stats;
        server_cache = server_turns;
    }
    engine.shutdown();
    for (turn, fastest) in ttft_reuse.iter_mut().zip(fastest_per_turn(&engine_rounds)) {
        turn.ttft_ms = fastest;
    }
    for (turn, fastest) in server_cache.iter_mut().zip(fastest_per_turn(&server_rounds)) {
        turn.ttft_ms = fastest;
    }
    // The server's figures only when it answered every turn of every round.
    let server = binary.filter(|_| lost.is_none()).map(|binary| ServerReport {
        binary: binary.display().to_string(),
        ttft_ratio_vs_cached_server: ttft_reuse.iter().zip(&server_cache).map(|(h, s)| h.ttft_ms / s.ttft_ms).collect(),
        ttft_ms_cache: server_cache.iter().map(|s| s.ttft_ms).collect(),
        ttft_ms_no_cache: server_no_cache.iter().map(|s| s.ttft_ms).collect(),
        cached_tokens: server_cache.iter().map(|s| s.cached_tokens).collect(),
    });
    let report = ConversationReport {
        ttft_vs_cached_server_median: server.as_ref().and_then(|s| median(&s.ttft_ratio_vs_cached_server)),
        ttft_ms_reuse: ttft_reuse.iter().map(|s| s.ttft_ms).collect(),
        ttft_ms_no_reuse: ttft_no_reuse.iter().map(|s| s.ttft_ms).collect(),
        cached_tokens: ttft_reuse.iter().map(|s| s.cached_tokens).collect(),
        prompt_tokens_per_turn: ttft_reuse.iter().map(|s| s.prompt_tokens).collect(),
        server,
    };
    Ok((report, lost))
}

async fn decoding_section(args: &BenchArgs) -> Result<DecodingReport, BenchError> {
    let engine = Engine::spawn();
    engine.load(&args.model, load_params(args, true)).await.map_err(|e| e.to_string())?;
    let decoding = decoding::run(&engine, args.draft.as_deref()).await?;
    engine.shutdown();
    Ok(decoding)
}

/// The middle value (the mean of the middle two for an even count).
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
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

/// The smallest value at each position across rounds.
fn fastest_per_turn(rounds: &[Vec<f64>]) -> Vec<f64> {
    let turns = rounds.iter().map(Vec::len).min().unwrap_or(0);
    (0..turns).map(|t| rounds.iter().map(|r| r[t]).fold(f64::INFINITY, f64::min)).collect()
}

/// A fresh llama-server when there is one and none has failed yet (`lost` keeps the first failure).
async fn fresh_server(binary: Option<&std::path::Path>, args: &BenchArgs, lost: &mut Option<PeerError>) -> Option<LlamaServer> {
    let binary = binary.filter(|_| lost.is_none())?;
    match LlamaServer::start(binary, &args.model, args.threads, N_CTX, N_BATCH, &[]).await {
        Ok(server) => Some(server),
        Err(e) => {
            *lost = Some(e);
            None
        }
    }
}

/// `turns` scripted turns of about 70 new tokens each, each reply exactly 48 tokens. With a
/// server, it answers each turn of its own copy of the conversation right after the engine
/// (cache on when the engine is loaded with reuse), so both sides meet the same moment's machine.
/// A server that fails is dropped and its failure kept in `lost`; the engine goes on.
async fn conversation(
    engine: &Engine,
    server: &mut Option<LlamaServer>,
    lost: &mut Option<PeerError>,
    turns: usize,
) -> Result<(Vec<ReplyStats>, Vec<peer::ServerTurn>), BenchError> {
    let reuse = engine.loaded().is_some_and(|m| m.load.reuse_kv);
    let (mut history, mut server_history) = (Vec::new(), Vec::<(&str, String)>::new());
    let (mut stats, mut server_turns) = (Vec::new(), Vec::new());
    let mut answered = |server: &mut Option<LlamaServer>, reply: Result<peer::ServerTurn, PeerError>| match reply {
        Ok(turn) => Some(turn),
        Err(e) => {
            *lost = Some(e);
            *server = None;
            None
        }
    };
    // One short untimed exchange first: the first decode after a load pays one-off costs
    // (page faults into the weights, compute buffers) that no later turn pays.
    const WARM_UP: &str = "Hello!";
    turn(engine, &[ChatMessage::new(Role::User, WARM_UP)], 4).await?;
    if let Some(s) = server.as_ref() {
        let reply = s.reply(&[("user", WARM_UP)], 4, reuse).await;
        answered(server, reply);
    }
    for n in 1..=turns {
        history.push(ChatMessage::new(Role::User, user_turn(n)));
        let (text, s) = turn_text(engine, &history, TURN_REPLY_TOKENS).await?;
        history.push(ChatMessage::new(Role::Assistant, text));
        stats.push(s);
        if let Some(s) = server.as_ref() {
            tokio::time::sleep(SETTLE).await;
            server_history.push(("user", user_turn(n)));
            let messages: Vec<(&str, &str)> = server_history.iter().map(|(r, c)| (*r, c.as_str())).collect();
            let reply = s.reply(&messages, TURN_REPLY_TOKENS, reuse).await;
            if let Some(turn) = answered(server, reply) {
                server_history.push(("assistant", turn.text.clone()));
                server_turns.push(turn);
            }
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

/// About 500 tokens of ordinary prose for the prefill measurement.
fn long_prompt() -> String {
    let paragraph = "The history of bread is the history of people settling down. Grain that could be \
        stored through winter let villages grow, and the oven became the warm centre of the house. \
        Bakers learned to keep a piece of yesterday's dough to raise today's loaf, long before anyone \
        knew that yeast was alive. ";
    format!("Summarise the following text.\n\n{}", paragraph.repeat(8))
}
