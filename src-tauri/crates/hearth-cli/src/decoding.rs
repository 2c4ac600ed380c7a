//! `hearth-cli bench`, decoding strategies: each against plain greedy decoding on the same
//! engine, alternating, best of `ROUNDS` per side (noise only ever slows a run down).

use serde::Serialize;

use std::path::Path;
use std::time::Instant;

use hearth_core::{ChatMessage, ReplyStats, Role, SamplingParams, Speculative, Strategy};
use hearth_engine::Engine;

use crate::bench_kit::reply_with;

const ROUNDS: usize = 3;
/// Reply length for the free-writing task (end of turn ignored, so both sides write as much).
const CHAT_TOKENS: u32 = 256;
/// Each consensus candidate's length, and the single reply's.
const MBR_TOKENS: u32 = 128;
/// Room for the edit task's reply, which ends when the paragraph is written out.
const EDIT_TOKENS: u32 = 400;

#[derive(Serialize)]
pub struct DecodingReport {
    /// Decode speed with prompt lookup ÷ without, on a reply that rewrites its prompt (goal ≥ 1.5).
    pub lookup_speedup_edit: f64,
    /// The same on free writing, where little repeats (goal ≥ 0.95).
    pub lookup_speedup_chat: f64,
    pub lookup_edit_tps: f64,
    pub plain_edit_tps: f64,
    pub lookup_chat_tps: f64,
    pub plain_chat_tps: f64,
    /// Share of drafted tokens the sampler kept, per task.
    pub lookup_acceptance_edit: f64,
    pub lookup_acceptance_chat: f64,
    /// Each task's reply was the same with and without drafts.
    pub lookup_outputs_identical: bool,
    /// A consensus reply of 8 candidates ÷ one sampled reply of the same length, wall time
    /// from asking to the whole reply (goal ≤ 3).
    pub mbr8_time_ratio: f64,
    pub mbr8_ms: f64,
    pub single_sampled_ms: f64,
    /// With `--draft FILE`: the same two tasks drafted by that model.
    #[serde(flatten)]
    pub draft_model: Option<DraftModelReport>,
}

/// Speculative decoding with a draft model against none, on the prompt-lookup tasks.
#[derive(Serialize)]
pub struct DraftModelReport {
    pub draft_speedup_edit: f64,
    pub draft_speedup_chat: f64,
    pub draft_acceptance_edit: f64,
    pub draft_acceptance_chat: f64,
    pub draft_outputs_identical: bool,
}

pub async fn run(engine: &Engine, draft: Option<&Path>) -> Result<DecodingReport, String> {
    let edit = [ChatMessage::new(Role::User, edit_prompt())];
    let chat = [ChatMessage::new(Role::User, "Write a short story about a lighthouse keeper who finds a message in a bottle.")];
    let edit_params = SamplingParams::greedy(EDIT_TOKENS);
    let chat_params = SamplingParams { ignore_eos: true, ..SamplingParams::greedy(CHAT_TOKENS) };
    let lookup = |plain: &SamplingParams| SamplingParams { speculative: Speculative::PromptLookup, ..plain.clone() };
    let (plain_edit, lookup_edit, edit_same) = compare(engine, &edit, &edit_params, lookup(&edit_params)).await?;
    let (plain_chat, lookup_chat, chat_same) = compare(engine, &chat, &chat_params, lookup(&chat_params)).await?;
    let (single_ms, mbr8_ms) = consensus_time(engine, &chat).await?;
    let acceptance = |s: &ReplyStats| f64::from(s.accepted_tokens) / f64::from(s.drafted_tokens.max(1));
    let draft_model = match draft {
        None => None,
        Some(file) => {
            let drafted = |plain: &SamplingParams| SamplingParams {
                speculative: Speculative::DraftModel,
                draft_model: Some(file.display().to_string()),
                ..plain.clone()
            };
            let (plain_edit, draft_edit, edit_same) = compare(engine, &edit, &edit_params, drafted(&edit_params)).await?;
            let (plain_chat, draft_chat, chat_same) = compare(engine, &chat, &chat_params, drafted(&chat_params)).await?;
            Some(DraftModelReport {
                draft_speedup_edit: draft_edit.decode_tps / plain_edit.decode_tps,
                draft_speedup_chat: draft_chat.decode_tps / plain_chat.decode_tps,
                draft_acceptance_edit: acceptance(&draft_edit),
                draft_acceptance_chat: acceptance(&draft_chat),
                draft_outputs_identical: edit_same && chat_same,
            })
        }
    };
    Ok(DecodingReport {
        lookup_speedup_edit: lookup_edit.decode_tps / plain_edit.decode_tps,
        lookup_speedup_chat: lookup_chat.decode_tps / plain_chat.decode_tps,
        lookup_edit_tps: lookup_edit.decode_tps,
        plain_edit_tps: plain_edit.decode_tps,
        lookup_chat_tps: lookup_chat.decode_tps,
        plain_chat_tps: plain_chat.decode_tps,
        lookup_acceptance_edit: acceptance(&lookup_edit),
        lookup_acceptance_chat: acceptance(&lookup_chat),
        lookup_outputs_identical: edit_same && chat_same,
        mbr8_time_ratio: mbr8_ms / single_ms,
        mbr8_ms,
        single_sampled_ms: single_ms,
        draft_model,
    })
}

/// One sampled reply and a consensus of 8, `MBR_TOKENS` long each, alternating; the fastest of
/// each in milliseconds.
async fn consensus_time(engine: &Engine, history: &[ChatMessage]) -> Result<(f64, f64), String> {
    let single = SamplingParams { temperature: 0.8, seed: Some(1), ignore_eos: true, ..SamplingParams::greedy(MBR_TOKENS) };
    let mbr = SamplingParams { strategy: Strategy::Consensus, mbr_candidates: 8, ..single.clone() };
    let (mut best_single, mut best_mbr) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..ROUNDS {
        for (params, best) in [(&single, &mut best_single), (&mbr, &mut best_mbr)] {
            let started = Instant::now();
            reply_with(engine, history, params.clone(), None).await?;
            *best = best.min(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    Ok((best_single, best_mbr))
}

/// The same reply without and with speculative decoding (`drafting`), `ROUNDS` times
/// alternating: each side's fastest stats, and whether every reply was the same text. A first
/// reply puts the prompt in the cache, so each measured one reads it from there alike.
async fn compare(
    engine: &Engine,
    history: &[ChatMessage],
    plain: &SamplingParams,
    drafting: SamplingParams,
) -> Result<(ReplyStats, ReplyStats, bool), String> {
    let plain = plain.clone();
    reply_with(engine, history, SamplingParams { max_tokens: 1, ..plain.clone() }, None).await?;
    let (mut best_plain, mut best_lookup) = (ReplyStats::default(), ReplyStats::default());
    let mut texts = Vec::new();
    for _ in 0..ROUNDS {
        for (params, best) in [(&plain, &mut best_plain), (&drafting, &mut best_lookup)] {
            let (text, stats) = reply_with(engine, history, params.clone(), None).await?;
            texts.push(text);
            if stats.decode_tps > best.decode_tps {
                *best = stats;
            }
        }
    }
    let identical = texts.iter().all(|t| *t == texts[0]);
    Ok((best_plain, best_lookup, identical))
}

/// A paragraph with spelling mistakes to write out corrected: most of the reply is the prompt.
fn edit_prompt() -> String {
    "Fix the spelling in the following text and write all of it out again, corrected.\n\n\
     Most gardners agree that the best time to plant tomatos is after the last frost, when the \
     soil has warmed and the nights stay mild. Choose a spot that gets at least six hours of sun, \
     and dig plenty of compost into the bed a few weeks befor planting. Water deeply but not too \
     often, so the roots grow down in serch of moisture, and tie the stems to stakes as the plants \
     get taller. Pick the fruit when it is evenly colored and gives slightly when presed."
        .into()
}
