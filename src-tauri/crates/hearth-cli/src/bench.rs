//! `hearth-cli bench`: the engine's speed against a raw llama-cpp-2 loop on the same model and
//! threads, and time to first token over a scripted conversation with KV reuse on and off.

use serde::Serialize;

use hearth_core::{CancelFlag, ChatBackend, ChatMessage, GenEvent, ReplyRequest, ReplyStats, Role, SamplingParams};
use hearth_engine::bench::raw_llama_speed;
use hearth_engine::{Engine, LoadParams};

use crate::args::BenchArgs;

const N_CTX: u32 = 4096;
const N_BATCH: u32 = 512;
const DECODE_TOKENS: u32 = 128;
/// Reply length per scripted turn (end of turn is ignored so every turn has exactly this).
const TURN_REPLY_TOKENS: u32 = 48;

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
    ttft_ms_reuse: Vec<f64>,
    ttft_ms_no_reuse: Vec<f64>,
    cached_tokens: Vec<u32>,
    prompt_tokens_per_turn: Vec<u32>,
}

pub async fn run(args: BenchArgs) -> Result<(), String> {
    let load = |reuse_kv| LoadParams {
        n_ctx: Some(N_CTX),
        n_threads: Some(args.threads),
        n_batch: N_BATCH,
        reuse_kv,
        ..LoadParams::default()
    };
    let prompt = long_prompt();

    // Each side warms up once, then is measured; raw and engine alternate so that drift in the
    // machine's speed hits both alike.
    let model = args.model.clone();
    let threads = args.threads;
    let raw = {
        let prompt = prompt.clone();
        tokio::task::spawn_blocking(move || {
            raw_llama_speed(&model, threads, N_CTX, N_BATCH, &prompt, 16)?;
            raw_llama_speed(&model, threads, N_CTX, N_BATCH, &prompt, DECODE_TOKENS as usize)
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?
    };

    let engine = Engine::spawn();
    engine.load(&args.model, load(false)).await.map_err(|e| e.to_string())?;
    let one_turn = [ChatMessage::new(Role::User, prompt)];
    turn(&engine, &one_turn, 16).await?;
    let measured = turn(&engine, &one_turn, DECODE_TOKENS).await?;

    let ttft_no_reuse = conversation(&engine, args.turns).await?;
    engine.load(&args.model, load(true)).await.map_err(|e| e.to_string())?;
    let ttft_reuse = conversation(&engine, args.turns).await?;

    let engine_prefill_tps = f64::from(measured.prompt_tokens) / (measured.ttft_ms / 1000.0);
    let report = Report {
        threads: args.threads,
        prompt_tokens: measured.prompt_tokens,
        raw_prefill_tps: raw.prefill_tps,
        engine_prefill_tps,
        prefill_ratio: engine_prefill_tps / raw.prefill_tps,
        raw_decode_tps: raw.decode_tps,
        engine_decode_tps: measured.decode_tps,
        decode_ratio: measured.decode_tps / raw.decode_tps,
        ttft_ms_reuse: ttft_reuse.iter().map(|s| s.ttft_ms).collect(),
        ttft_ms_no_reuse: ttft_no_reuse.iter().map(|s| s.ttft_ms).collect(),
        cached_tokens: ttft_reuse.iter().map(|s| s.cached_tokens).collect(),
        prompt_tokens_per_turn: ttft_reuse.iter().map(|s| s.prompt_tokens).collect(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("report serializes"));
    } else {
        print_table(&report);
    }
    Ok(())
}

fn print_table(r: &Report) {
    println!("threads {}, prompt {} tokens", r.threads, r.prompt_tokens);
    println!("{:<10} {:>12} {:>12} {:>8}", "", "raw tok/s", "engine tok/s", "ratio");
    println!("{:<10} {:>12.1} {:>12.1} {:>8.3}", "prefill", r.raw_prefill_tps, r.engine_prefill_tps, r.prefill_ratio);
    println!("{:<10} {:>12.1} {:>12.1} {:>8.3}", "decode", r.raw_decode_tps, r.engine_decode_tps, r.decode_ratio);
    println!("\n{:>4} {:>8} {:>8} {:>14} {:>16}", "turn", "prompt", "cached", "TTFT reuse ms", "TTFT no reuse ms");
    for i in 0..r.ttft_ms_reuse.len() {
        println!(
            "{:>4} {:>8} {:>8} {:>14.0} {:>16.0}",
            i + 1,
            r.prompt_tokens_per_turn[i],
            r.cached_tokens[i],
            r.ttft_ms_reuse[i],
            r.ttft_ms_no_reuse[i]
        );
    }
}

/// `turns` scripted turns of about 70 new tokens each, each reply exactly 48 tokens.
async fn conversation(engine: &Engine, turns: usize) -> Result<Vec<ReplyStats>, String> {
    let mut history = Vec::new();
    let mut stats = Vec::new();
    for n in 1..=turns {
        history.push(ChatMessage::new(Role::User, user_turn(n)));
        let (text, s) = turn_text(engine, &history, TURN_REPLY_TOKENS).await?;
        history.push(ChatMessage::new(Role::Assistant, text));
        stats.push(s);
    }
    Ok(stats)
}

async fn turn(engine: &Engine, history: &[ChatMessage], max_tokens: u32) -> Result<ReplyStats, String> {
    turn_text(engine, history, max_tokens).await.map(|(_, s)| s)
}

async fn turn_text(engine: &Engine, history: &[ChatMessage], max_tokens: u32) -> Result<(String, ReplyStats), String> {
    let sampling = SamplingParams { ignore_eos: true, ..SamplingParams::greedy(max_tokens) };
    let request = ReplyRequest { messages: history.to_vec(), sampling, cancel: CancelFlag::new() };
    let mut stream = engine.start_reply(request).map_err(|e| e.to_string())?;
    let mut text = String::new();
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(d) => text.push_str(&d),
            GenEvent::Finished { stats, .. } => return Ok((text, stats)),
            GenEvent::Failed(e) => return Err(e.to_string()),
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
