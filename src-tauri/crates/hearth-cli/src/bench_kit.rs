//! What the bench's sections share: which sections there are, why one failed, the context they
//! run in, and one reply as the caller sees it. Each section's module and the bench's runner use
//! this; none of them uses another.

use std::fmt;
use std::time::Instant;

use hearth_core::{CancelFlag, ChatBackend, ChatMessage, GenEvent, ReplyRequest, ReplyStats, SamplingParams};
use hearth_engine::Engine;

use crate::peer::PeerError;

pub const N_CTX: u32 = 4096;
pub const N_BATCH: u32 = 512;
/// Reply length per scripted turn (end of turn is ignored so every turn has exactly this).
pub const TURN_REPLY_TOKENS: u32 = 48;

/// The bench's sections, in the order they run; `--sections` picks some.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Speed,
    Conversation,
    Switch,
    SwitchServer,
    Typing,
    Parallel,
    Decoding,
    BusyCore,
    Tools,
    Attach,
    Retrieve,
}

impl Section {
    pub const ALL: [Section; 11] = [
        Section::Speed,
        Section::Conversation,
        Section::Switch,
        Section::SwitchServer,
        Section::Typing,
        Section::Parallel,
        Section::Decoding,
        Section::BusyCore,
        Section::Tools,
        Section::Attach,
        Section::Retrieve,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Section::Speed => "speed",
            Section::Conversation => "conversation",
            Section::Switch => "switch",
            Section::SwitchServer => "switch-server",
            Section::Typing => "typing",
            Section::Parallel => "parallel",
            Section::Decoding => "decoding",
            Section::BusyCore => "busy-core",
            Section::Tools => "tools",
            Section::Attach => "attach",
            Section::Retrieve => "retrieve",
        }
    }

    /// A comma-separated list of section names, run in the bench's own order.
    pub fn parse_list(list: &str) -> Result<Vec<Section>, String> {
        let mut picked = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let section = Section::ALL.into_iter().find(|s| s.name() == name).ok_or_else(|| {
                let names: Vec<&str> = Section::ALL.iter().map(|s| s.name()).collect();
                format!("--sections: no section {name:?} (the sections: {})", names.join(", "))
            })?;
            picked.push(section);
        }
        if picked.is_empty() {
            return Err("--sections names no section".into());
        }
        Ok(Section::ALL.into_iter().filter(|s| picked.contains(s)).collect())
    }
}

/// Why a section failed.
#[derive(Debug)]
pub enum BenchError {
    /// A server (llama-server or `hearth-cli serve`) failed to start or to answer.
    Peer(PeerError),
    /// The engine or the bench itself.
    Bench(String),
}

impl From<PeerError> for BenchError {
    fn from(e: PeerError) -> Self {
        BenchError::Peer(e)
    }
}

impl From<String> for BenchError {
    fn from(e: String) -> Self {
        BenchError::Bench(e)
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Peer(e) => e.fmt(f),
            BenchError::Bench(e) => f.write_str(e),
        }
    }
}

/// One greedy reply of exactly `max_tokens` tokens in `conversation`.
pub async fn turn_in(
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
    reply_to(engine, request).await
}

/// One reply of `request`: its text, and its stats with TTFT as the caller saw it.
pub async fn reply_to(engine: &Engine, request: ReplyRequest) -> Result<(String, ReplyStats), String> {
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
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => {}
        }
    }
    Err("the engine stopped unexpectedly".into())
}

/// The middle of `values` (the upper of the two middle ones for an even count; NaN, written as
/// null, for none).
pub fn middle(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// `value` to `places` decimals.
pub fn rounded(value: f64, places: i32) -> f64 {
    (value * 10f64.powi(places)).round() / 10f64.powi(places)
}

pub fn user_turn(n: usize) -> String {
    format!(
        "Question {n}: I am planning a small vegetable garden behind my house this spring. The soil is \
         heavy clay, the spot gets about six hours of sun, and I have little time on weekdays. Which \
         three vegetables would you grow first, and how should I prepare the bed before planting them?"
    )
}
