//! `hearth-cli bench`, section `tools`: an agent's round trip on the engine. Round one asks for a
//! call (required, one tool); the tool answers at once; round two sends the call back with its
//! result, in the same conversation, and the model answers. Measured: the time from sending round
//! two to its first token (the tool's own time is nil here, so this is Hearth's whole overhead),
//! and how many tokens round two read against the tokens of the result (1.0: the result alone,
//! round one's prompt and the call from the cache). Then the same with a tool that takes 100 ms,
//! its result's turn read ahead meanwhile as the app's agent loop does. Beside it, with a
//! llama-server built, the same rounds on llama.cpp's own server: its prompt cache holds round
//! one and the call (sent as the assistant's turn to continue), and round two reads the same
//! result turn — the reference for the overhead.

use std::path::Path;

use serde::Serialize;
use serde_json::json;

use hearth_core::{
    CancelFlag, ChatBackend, ChatMessage, OfferedTools, ReplyRequest, ReplyStats, Role, SamplingParams, ToolChoice, ToolSpec, call_block,
    read_calls, tool_response,
};
use hearth_engine::tools::tool_instructions;
use hearth_engine::{Engine, LoadParams};

use crate::args::BenchArgs;
use crate::bench_kit::{N_BATCH, N_CTX, middle, reply_to, rounded};
use crate::peer::{LlamaServer, PeerError};

/// Rounds, each its own conversation; the figures are their medians.
const CITIES: [&str; 5] = ["Paris", "Lisbon", "Oslo", "Kyoto", "Lima"];
/// Conversation ids of the section's own (apart from the other sections').
const FIRST_CONVERSATION: i64 = 70_000;
/// A tool's own time in the rounds that read ahead while it runs: a local MCP server's call.
const TOOL_TIME: std::time::Duration = std::time::Duration::from_millis(100);
/// A weather tool's answer, as short as most are.
const RESULT: &str = r#"{"temperature": 18, "sky": "cloudy"}"#;

#[derive(Serialize)]
pub struct ToolsReport {
    /// Round two sent → its first token, in ms (median over the rounds).
    pub tool_round_overhead_ms: f64,
    /// Tokens round two read ÷ tokens of the result in its turn (median; 1.0 is the floor).
    pub tool_round_cached_ratio: f64,
    /// Round one's time to its first token, for scale (it reads the whole prompt).
    pub tool_round_one_ttft_ms: f64,
    /// The tokens round two read (the result in its turn), for scale: each costs ~3 ms to read
    /// on two cores with the default model.
    pub tool_round_read_tokens: u32,
    pub tool_rounds: usize,
    /// The same as `tool_round_overhead_ms` for a tool that takes `TOOL_TIME`, during which the
    /// result's turn is read ahead up to the result (the app's agent loop does), and the tokens
    /// round two read then.
    pub tool_round_read_ahead_ms: f64,
    pub tool_round_read_ahead_tokens: u32,
    /// llama-server reading the same result turn after the same cached prompt and call: sent →
    /// first token, in ms (median), and Hearth's overhead ÷ it.
    pub tool_round_server_ms: Option<f64>,
    pub tool_round_vs_server: Option<f64>,
}

fn weather() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: "The weather forecast for a city".into(),
        parameters: json!({
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 40}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city", "unit"],
        }),
    }
}

fn request(messages: Vec<ChatMessage>, choice: ToolChoice, max_tokens: u32, conversation: i64) -> ReplyRequest {
    let mut request = ReplyRequest::new(messages, SamplingParams::greedy(max_tokens), CancelFlag::new());
    request.conversation = Some(conversation);
    request.tools = Some(OfferedTools { tools: vec![weather()], choice, parallel: false });
    request
}

/// The section; with `server` (a llama-server binary), its rounds too. A server that fails is
/// given back beside the engine's figures.
pub async fn run(args: &BenchArgs, load: LoadParams, server: Option<&Path>) -> Result<(ToolsReport, Option<PeerError>), String> {
    let (mut report, calls) = engine_rounds(args, load).await?;
    let Some(binary) = server else { return Ok((report, None)) };
    match server_rounds(args, binary, &calls).await {
        Ok(server) => {
            report.tool_round_server_ms = Some(rounded(server, 1));
            report.tool_round_vs_server = Some(rounded(report.tool_round_overhead_ms / server, 3));
            Ok((report, None))
        }
        Err(lost) => Ok((report, Some(lost))),
    }
}

/// The rounds on the engine, and each round's question and call (as the engine wrote it).
async fn engine_rounds(args: &BenchArgs, load: LoadParams) -> Result<(ToolsReport, Vec<(String, String)>), String> {
    let engine = Engine::spawn();
    engine.load(&args.model, load).await.map_err(|e| format!("the model did not load: {e}"))?;
    let (mut overhead, mut ratio, mut first, mut read) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut calls, mut ahead, mut ahead_read) = (Vec::new(), Vec::new(), Vec::new());
    for (i, city) in CITIES.iter().enumerate() {
        let conversation = FIRST_CONVERSATION + i as i64;
        let question = format!("What is the weather in {city}?");
        let ask = vec![ChatMessage::new(Role::User, question.clone())];
        let (text, one) = reply_to(&engine, request(ask.clone(), ToolChoice::Required, 80, conversation)).await?;
        let call = read_calls(&text).calls.into_iter().next().ok_or_else(|| format!("round one wrote no call: {text:?}"))?;
        let call = call_block(&call.name, &call.arguments);
        let history =
            [ask.clone(), vec![ChatMessage::new(Role::Assistant, call.clone()), ChatMessage::new(Role::User, tool_response(RESULT))]]
                .concat();
        calls.push((question, call));
        let (_, two) = reply_to(&engine, request(history, ToolChoice::Auto, 16, conversation)).await?;
        overhead.push(two.ttft_ms);
        ratio.push(read_ratio(&one, &two)?);
        first.push(one.ttft_ms);
        read.push(f64::from(two.prompt_tokens.saturating_sub(two.cached_tokens)));
        let (ms, tokens) = read_ahead_round(&engine, &ask, conversation + CITIES.len() as i64).await?;
        ahead.push(ms);
        ahead_read.push(tokens);
    }
    engine.shutdown();
    let report = ToolsReport {
        tool_round_overhead_ms: rounded(middle(&overhead), 1),
        tool_round_cached_ratio: rounded(middle(&ratio), 3),
        tool_round_one_ttft_ms: rounded(middle(&first), 1),
        tool_round_read_tokens: middle(&read) as u32,
        tool_rounds: CITIES.len(),
        tool_round_read_ahead_ms: rounded(middle(&ahead), 1),
        tool_round_read_ahead_tokens: middle(&ahead_read) as u32,
        tool_round_server_ms: None,
        tool_round_vs_server: None,
    };
    Ok((report, calls))
}

/// A round in conversation `conversation` whose tool takes [`TOOL_TIME`], its result's turn read
/// ahead meanwhile (the result empty) as the app's agent loop does: round two's TTFT (sent when
/// the tool answers: Hearth's overhead) and the tokens it read.
async fn read_ahead_round(engine: &Engine, ask: &[ChatMessage], conversation: i64) -> Result<(f64, f64), String> {
    let (text, _) = reply_to(engine, request(ask.to_vec(), ToolChoice::Required, 80, conversation)).await?;
    let call = read_calls(&text).calls.into_iter().next().ok_or_else(|| format!("round one wrote no call: {text:?}"))?;
    let call = ChatMessage::new(Role::Assistant, call_block(&call.name, &call.arguments));
    let answered = |result: &str| [ask, &[call.clone(), ChatMessage::new(Role::Tool, result)]].concat();
    let _ahead = engine.prefill(request(answered(""), ToolChoice::Auto, 16, conversation));
    tokio::time::sleep(TOOL_TIME).await;
    let (_, two) = reply_to(engine, request(answered(RESULT), ToolChoice::Auto, 16, conversation)).await?;
    Ok((two.ttft_ms, f64::from(two.prompt_tokens.saturating_sub(two.cached_tokens))))
}

/// The same rounds on llama-server, its prompt written by the model's template as the engine's
/// is (the tools described in a system message, the call in the assistant's turn, the result in
/// the user's): round one and the call are read first (the call as a turn to continue), then
/// round two reads the result turn alone. Its TTFT, median, in ms.
async fn server_rounds(args: &BenchArgs, binary: &Path, calls: &[(String, String)]) -> Result<f64, PeerError> {
    let server = LlamaServer::start(binary, &args.model, args.threads, N_CTX, N_BATCH, &[]).await?;
    let instructions = tool_instructions(&[weather()], None);
    let result = tool_response(RESULT);
    let mut ttft = Vec::new();
    for (question, call) in calls {
        let called = [("system", instructions.as_str()), ("user", question.as_str()), ("assistant", call.as_str())];
        server.reply(&called, 1, true).await?;
        let answered = [&called[..], &[("user", result.as_str())]].concat();
        ttft.push(server.reply(&answered, 4, true).await?.ttft_ms);
    }
    Ok(middle(&ttft))
}

/// Tokens round two read ÷ tokens it added after round one's prompt and reply (the result's turn).
fn read_ratio(one: &ReplyStats, two: &ReplyStats) -> Result<f64, String> {
    let read = two.prompt_tokens.saturating_sub(two.cached_tokens);
    let added = two.prompt_tokens.checked_sub(one.prompt_tokens + one.completion_tokens).filter(|&n| n > 0).ok_or_else(|| {
        format!(
            "round two's prompt ({} tokens) does not extend round one's ({} + {})",
            two.prompt_tokens, one.prompt_tokens, one.completion_tokens
        )
    })?;
    Ok(read as f64 / added as f64)
}
