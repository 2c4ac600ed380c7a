//! Every decoding parameter, in one validated struct. Defaults follow llama.cpp's.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::OverflowPolicy;
use crate::consensus::MbrUtility;

/// How the next token is chosen. Validated once, at the boundary, with [`SamplingParams::validate`].
/// Each stage is off at its neutral value (noted per field).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct SamplingParams {
    /// 0 picks the most likely token every time (greedy).
    pub temperature: f32,
    /// Dynamic temperature: the temperature varies by ± this much with the entropy (0 = off).
    pub dynatemp_range: f32,
    pub dynatemp_exponent: f32,
    /// Keep only the k most likely tokens (0 = off).
    pub top_k: u32,
    /// Keep the smallest set of tokens whose probability reaches p (1 = off).
    pub top_p: f32,
    /// Drop tokens less likely than min_p × the top token's probability (0 = off).
    pub min_p: f32,
    /// Locally typical sampling (1 = off).
    pub typical_p: f32,
    /// Keep tokens within n standard deviations of the top logit (0 = off).
    pub top_n_sigma: f32,
    /// XTC: with this probability, remove the most likely tokens above the threshold (0 = off).
    pub xtc_probability: f32,
    pub xtc_threshold: f32,
    /// DRY repetition penalty (0 = off).
    pub dry_multiplier: f32,
    pub dry_base: f32,
    pub dry_allowed_length: u32,
    /// Tokens DRY looks back over (-1 = the whole context, 0 = off).
    pub dry_last_n: i32,
    pub dry_sequence_breakers: Vec<String>,
    pub mirostat: Mirostat,
    pub mirostat_tau: f32,
    pub mirostat_eta: f32,
    /// Divide the logits of recently seen tokens (1 = off).
    pub repeat_penalty: f32,
    /// Tokens the penalties look back over (-1 = the whole context, 0 = off).
    pub repeat_last_n: i32,
    pub presence_penalty: f32,
    pub frequency_penalty: f32,
    pub logit_bias: Vec<LogitBias>,
    /// `None` draws a fresh seed per reply.
    pub seed: Option<u32>,
    /// Upper bound on generated tokens for one reply.
    pub max_tokens: u32,
    /// Never end the turn: end-of-turn tokens are banned, so the reply runs to `max_tokens`.
    pub ignore_eos: bool,
    /// The reply ends before any of these strings; they are never shown.
    pub stop: Vec<String>,
    pub constraint: Option<Constraint>,
    /// Order of the truncation stages; stages left out do not run.
    pub sampler_order: Vec<SamplerStage>,
    /// What to do when the conversation no longer fits the context window.
    pub overflow: OverflowPolicy,
    /// The token inspector: how many likeliest tokens are kept with each token of a reply (0
    /// keeps none). Local replies keep the distribution the sampler drew from; a llama.cpp
    /// server's, the model's probabilities it reports.
    pub top_probs: u32,
    /// Rounds of tool calls one turn may take (a reply that calls tools, its calls run, the next
    /// reply reads their results) before Hearth stops and says so under the last reply.
    pub max_tool_rounds: u32,
    /// Reasoning models: -1 lets the model reason as long as it does; 0 asks it not to (a template
    /// that takes `enable_thinking` is given false; a reasoning block it opens anyway is closed at
    /// once); N closes its reasoning block after N tokens, and it answers.
    pub reasoning_budget: i32,
    /// Speculative decoding: tokens guessed ahead are checked in one batch. The sampler still
    /// decides every token, so the reply is the one it would be without; only faster when the
    /// guesses hold (text the reply copies from the conversation: edits, code, quotes).
    pub speculative: Speculative,
    /// The most tokens guessed ahead per step.
    pub draft_max: u32,
    /// Speculative decoding with a draft model: the GGUF file of a small model with the same
    /// vocabulary that guesses ahead (the model chatting checks every guess).
    pub draft_model: Option<String>,
    /// How the reply is made from the model's choices.
    pub strategy: Strategy,
    /// Consensus: how many candidate replies are sampled (side by side, in one batch per step).
    pub mbr_candidates: u32,
    /// Consensus: how the candidates are compared.
    pub mbr_utility: MbrUtility,
    /// Beam search: how many partial replies are followed at each step.
    pub beam_width: u32,
    /// Beam search: finished replies are ranked by log-probability ÷ length^this (0 favours
    /// short replies, higher values longer ones).
    pub length_penalty: f32,
    /// Beam search: stop as soon as `beam_width` replies are finished, rather than while a
    /// longer one could still rank higher.
    pub early_stopping: bool,
    /// Beam search: how many of the best finished replies are kept with the reply (at most
    /// the beam width: a search finishes no more).
    pub n_best: u32,
}

/// How a reply is made from the model's choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Strategy {
    /// Token by token through the sampler chain; streamed as written.
    #[default]
    Sampling,
    /// Minimum Bayes risk: several replies are sampled and the one that agrees most with the
    /// others is kept (shown when all are written; the others stay with it).
    Consensus,
    /// The likeliest reply the model can write, searched `beam_width` partial replies at a
    /// time by their log-probability (the sampler's randomness and truncation do not apply;
    /// a grammar and logit biases do).
    Beam,
}

/// Where speculative decoding's guesses come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Speculative {
    #[default]
    Off,
    /// The tokens that followed the reply's last few tokens where they last occurred in the
    /// conversation (prompt lookup): no second model.
    PromptLookup,
    /// A small model of the same vocabulary ([`SamplingParams::draft_model`]) writes a few
    /// tokens ahead of the model chatting, which checks them all in one step.
    DraftModel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Mirostat {
    Off,
    V1,
    V2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum SamplerStage {
    Penalties,
    Dry,
    TopNSigma,
    TopK,
    TypicalP,
    TopP,
    MinP,
    Xtc,
    Temperature,
}

impl SamplerStage {
    /// llama.cpp's default order.
    pub const DEFAULT_ORDER: [SamplerStage; 9] = [
        SamplerStage::Penalties,
        SamplerStage::Dry,
        SamplerStage::TopNSigma,
        SamplerStage::TopK,
        SamplerStage::TypicalP,
        SamplerStage::TopP,
        SamplerStage::MinP,
        SamplerStage::Xtc,
        SamplerStage::Temperature,
    ];
}

/// Makes a token more or less likely. A bias of [`LogitBias::BAN`] or lower forbids it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LogitBias {
    pub target: BiasTarget,
    pub bias: f32,
}

impl LogitBias {
    /// At or below this, the token is never sampled (JSON has no -infinity).
    pub const BAN: f32 = -100.0;
    /// The largest bias taken.
    pub const MAX: f32 = 100.0;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum BiasTarget {
    /// One token id of the model's vocabulary.
    Token { id: u32 },
    /// Every token of this text as the model tokenizes it.
    Text { text: String },
}

/// Output constrained to a formal language.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", content = "source", rename_all = "camelCase")]
pub enum Constraint {
    /// A GBNF grammar (llama.cpp's format) whose root rule is `root`.
    Gbnf(String),
    /// A JSON schema; the reply is JSON that satisfies it.
    JsonSchema(String),
}

impl Default for SamplingParams {
    fn default() -> Self {
        SamplingParams {
            temperature: 0.8,
            dynatemp_range: 0.0,
            dynatemp_exponent: 1.0,
            top_k: 40,
            top_p: 0.95,
            min_p: 0.05,
            typical_p: 1.0,
            top_n_sigma: 0.0,
            xtc_probability: 0.0,
            xtc_threshold: 0.1,
            dry_multiplier: 0.0,
            dry_base: 1.75,
            dry_allowed_length: 2,
            dry_last_n: -1,
            dry_sequence_breakers: ["\n", ":", "\"", "*"].map(String::from).to_vec(),
            mirostat: Mirostat::Off,
            mirostat_tau: 5.0,
            mirostat_eta: 0.1,
            repeat_penalty: 1.0,
            repeat_last_n: 64,
            presence_penalty: 0.0,
            frequency_penalty: 0.0,
            logit_bias: Vec::new(),
            seed: None,
            max_tokens: 1024,
            ignore_eos: false,
            stop: Vec::new(),
            constraint: None,
            sampler_order: SamplerStage::DEFAULT_ORDER.to_vec(),
            overflow: OverflowPolicy::default(),
            speculative: Speculative::Off,
            draft_max: 8,
            draft_model: None,
            strategy: Strategy::Sampling,
            mbr_candidates: 8,
            mbr_utility: MbrUtility::ChrF,
            beam_width: 4,
            length_penalty: 1.0,
            early_stopping: true,
            n_best: 4,
            top_probs: 5,
            max_tool_rounds: 8,
            reasoning_budget: -1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field} must be {range}, got {value}")]
pub struct SamplingError {
    pub field: &'static str,
    pub range: &'static str,
    pub value: String,
}

/// A named set of sampling settings: built in, or saved by the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Preset {
    pub name: String,
    pub params: SamplingParams,
    #[serde(default)]
    pub built_in: bool,
}

impl SamplingParams {
    /// The built-in presets, from most to least predictable.
    pub fn presets() -> Vec<Preset> {
        let preset = |name: &str, params| Preset { name: name.into(), params, built_in: true };
        let d = SamplingParams::default();
        vec![
            preset("Precise", SamplingParams { temperature: 0.2, top_p: 0.9, top_k: 40, min_p: 0.05, repeat_penalty: 1.05, ..d.clone() }),
            preset("Balanced", d.clone()),
            preset(
                "Creative",
                SamplingParams {
                    temperature: 1.1,
                    top_p: 0.98,
                    min_p: 0.02,
                    top_k: 0,
                    xtc_probability: 0.5,
                    xtc_threshold: 0.1,
                    dry_multiplier: 0.8,
                    ..d
                },
            ),
        ]
    }

    /// Greedy decoding: the same prompt always gets the same reply.
    pub fn greedy(max_tokens: u32) -> Self {
        SamplingParams { temperature: 0.0, max_tokens, ..SamplingParams::default() }
    }

    pub fn validate(&self) -> Result<(), SamplingError> {
        let bad = |field, range, value: String| Err(SamplingError { field, range, value });
        let json = serde_json::to_value(self).expect("SamplingParams serializes");
        for r in RANGES {
            let value = &json[r.key];
            // NaN and infinities serialize as null: out of every range.
            let ok = value.as_f64().is_some_and(|v| v >= r.min && v <= r.max);
            if !ok {
                return bad(r.key, r.text, shown(value));
            }
        }
        if let Some(b) = self.dry_sequence_breakers.iter().find(|b| b.is_empty() || b.contains('\0')) {
            return bad("drySequenceBreakers", "non-empty strings without NUL characters", format!("{b:?}"));
        }
        for b in &self.logit_bias {
            if !(b.bias >= LogitBias::BAN && b.bias <= LogitBias::MAX) {
                return bad("logitBias.bias", "between -100 (never) and 100", b.bias.to_string());
            }
            if matches!(&b.target, BiasTarget::Text { text } if text.is_empty()) {
                return bad("logitBias.text", "a non-empty text", "\"\"".into());
            }
        }
        if let Some(s) = self.stop.iter().find(|s| s.is_empty()) {
            return bad("stop", "non-empty strings", format!("{s:?}"));
        }
        if let Some(Constraint::Gbnf(src) | Constraint::JsonSchema(src)) = &self.constraint
            && (src.trim().is_empty() || src.contains('\0'))
        {
            return bad("constraint", "a non-empty grammar or schema", format!("{src:?}"));
        }
        match (&self.speculative, &self.draft_model) {
            (Speculative::DraftModel, None) => return bad("draftModel", "a model file to draft with", "none".into()),
            (_, Some(path)) if path.trim().is_empty() || path.contains('\0') => {
                return bad("draftModel", "a model file to draft with", format!("{path:?}"));
            }
            _ => {}
        }
        if self.strategy == Strategy::Consensus && self.temperature == 0.0 {
            // Greedy candidates are all the same reply.
            return bad("temperature", "above 0 for consensus decoding (its candidates are sampled)", "0".into());
        }
        for (i, stage) in self.sampler_order.iter().enumerate() {
            if self.sampler_order[..i].contains(stage) {
                return bad("samplerOrder", "each stage at most once", format!("{stage:?} twice"));
            }
        }
        Ok(())
    }
}

/// The numeric range each field is validated against; the settings panel shows the same table.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct FieldRange {
    /// The field's name in JSON.
    pub key: &'static str,
    pub min: f64,
    pub max: f64,
    /// The range in words, as refusals say it ("between 0 and 1").
    pub text: &'static str,
    /// Whole numbers only.
    pub integer: bool,
}

pub(crate) const fn range(key: &'static str, min: f64, max: f64, text: &'static str) -> FieldRange {
    FieldRange { key, min, max, text, integer: false }
}

pub(crate) const fn whole(key: &'static str, min: f64, max: f64, text: &'static str) -> FieldRange {
    FieldRange { key, min, max, text, integer: true }
}

const RANGES: &[FieldRange] = &[
    range("temperature", 0.0, 5.0, "between 0 and 5"),
    range("dynatempRange", 0.0, 5.0, "between 0 and 5"),
    range("dynatempExponent", 0.0, 10.0, "between 0 and 10"),
    whole("topK", 0.0, 1e6, "between 0 and 1000000"),
    range("topP", 0.0, 1.0, "between 0 and 1"),
    range("minP", 0.0, 1.0, "between 0 and 1"),
    range("typicalP", 0.0, 1.0, "between 0 and 1"),
    range("topNSigma", 0.0, 10.0, "between 0 and 10"),
    range("xtcProbability", 0.0, 1.0, "between 0 and 1"),
    range("xtcThreshold", 0.0, 0.5, "between 0 and 0.5"),
    range("dryMultiplier", 0.0, 5.0, "between 0 and 5"),
    range("dryBase", 1.0, 4.0, "between 1 and 4"),
    whole("dryAllowedLength", 0.0, 100.0, "between 0 and 100"),
    whole("dryLastN", -1.0, 1e6, "-1 (whole context) or between 0 and 1000000"),
    range("mirostatTau", 0.0, 20.0, "between 0 and 20"),
    range("mirostatEta", 0.0, 1.0, "between 0 and 1"),
    range("repeatPenalty", 0.5, 3.0, "between 0.5 and 3"),
    whole("repeatLastN", -1.0, 1e6, "-1 (whole context) or between 0 and 1000000"),
    range("presencePenalty", -2.0, 2.0, "between -2 and 2"),
    range("frequencyPenalty", -2.0, 2.0, "between -2 and 2"),
    whole("maxTokens", 1.0, 1e6, "between 1 and 1000000"),
    whole("draftMax", 1.0, 64.0, "between 1 and 64"),
    whole("mbrCandidates", 2.0, 16.0, "between 2 and 16"),
    whole("beamWidth", 1.0, 8.0, "between 1 and 8"),
    range("lengthPenalty", 0.0, 3.0, "between 0 and 3"),
    whole("nBest", 1.0, 8.0, "between 1 and 8"),
    whole("topProbs", 0.0, 20.0, "between 0 and 20"),
    whole("maxToolRounds", 1.0, 64.0, "between 1 and 64"),
    whole("reasoningBudget", -1.0, 1e6, "-1 (no limit), 0 (off) or up to 1000000"),
];

impl SamplingParams {
    /// The numeric ranges `validate` enforces.
    pub fn ranges() -> &'static [FieldRange] {
        RANGES
    }
}

/// A rejected value as the user typed it. Every numeric field is an f32 or a small integer, so
/// printing through f32 undoes JSON's widening (0.1f32 would otherwise show as 0.10000000149…).
fn shown(value: &serde_json::Value) -> String {
    match value.as_f64() {
        Some(v) => (v as f32).to_string(),
        None => "a value that is not a finite number".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(change: impl FnOnce(&mut SamplingParams), expected: Result<(), &str>) {
        let mut params = SamplingParams::default();
        change(&mut params);
        let got = params.validate().map_err(|e| e.to_string());
        assert_eq!(got, expected.map_err(str::to_owned), "{params:?}");
    }

    #[test]
    fn validation_names_the_field_and_range() {
        check(|_| {}, Ok(()));
        check(|p| p.temperature = 0.0, Ok(()));
        check(|p| p.temperature = -0.1, Err("temperature must be between 0 and 5, got -0.1"));
        check(|p| p.temperature = f32::NAN, Err("temperature must be between 0 and 5, got a value that is not a finite number"));
        check(|p| p.top_p = 1.5, Err("topP must be between 0 and 1, got 1.5"));
        check(|p| p.min_p = f32::INFINITY, Err("minP must be between 0 and 1, got a value that is not a finite number"));
        check(|p| p.top_k = 2_000_000, Err("topK must be between 0 and 1000000, got 2000000"));
        check(|p| p.xtc_threshold = 0.6, Err("xtcThreshold must be between 0 and 0.5, got 0.6"));
        check(|p| p.dry_base = 0.5, Err("dryBase must be between 1 and 4, got 0.5"));
        check(|p| p.dry_last_n = -2, Err("dryLastN must be -1 (whole context) or between 0 and 1000000, got -2"));
        check(
            |p| p.repeat_penalty = f32::INFINITY,
            Err("repeatPenalty must be between 0.5 and 3, got a value that is not a finite number"),
        );
        check(
            |p| p.dry_sequence_breakers.push("a\0b".into()),
            Err("drySequenceBreakers must be non-empty strings without NUL characters, got \"a\\0b\""),
        );
        check(|p| p.mirostat_eta = 2.0, Err("mirostatEta must be between 0 and 1, got 2"));
        check(|p| p.repeat_penalty = 0.0, Err("repeatPenalty must be between 0.5 and 3, got 0"));
        check(|p| p.presence_penalty = 3.0, Err("presencePenalty must be between -2 and 2, got 3"));
        check(
            |p| p.logit_bias.push(LogitBias { target: BiasTarget::Token { id: 5 }, bias: -1000.0 }),
            Err("logitBias.bias must be between -100 (never) and 100, got -1000"),
        );
        check(
            |p| p.logit_bias.push(LogitBias { target: BiasTarget::Text { text: String::new() }, bias: 1.0 }),
            Err("logitBias.text must be a non-empty text, got \"\""),
        );
        check(|p| p.max_tokens = 0, Err("maxTokens must be between 1 and 1000000, got 0"));
        check(|p| p.draft_max = 65, Err("draftMax must be between 1 and 64, got 65"));
        check(|p| p.speculative = Speculative::DraftModel, Err("draftModel must be a model file to draft with, got none"));
        check(|p| p.draft_model = Some(" ".into()), Err("draftModel must be a model file to draft with, got \" \""));
        check(
            |p| {
                p.speculative = Speculative::DraftModel;
                p.draft_model = Some("/models/small.gguf".into());
            },
            Ok(()),
        );
        check(|p| p.mbr_candidates = 1, Err("mbrCandidates must be between 2 and 16, got 1"));
        check(|p| p.strategy = Strategy::Consensus, Ok(()));
        check(|p| p.beam_width = 9, Err("beamWidth must be between 1 and 8, got 9"));
        check(|p| p.length_penalty = -1.0, Err("lengthPenalty must be between 0 and 3, got -1"));
        check(
            |p| (p.strategy, p.temperature) = (Strategy::Consensus, 0.0),
            Err("temperature must be above 0 for consensus decoding (its candidates are sampled), got 0"),
        );
        check(|p| p.stop.push(String::new()), Err("stop must be non-empty strings, got \"\""));
        check(|p| p.constraint = Some(Constraint::Gbnf("  ".into())), Err("constraint must be a non-empty grammar or schema, got \"  \""));
        check(|p| p.sampler_order.push(SamplerStage::TopK), Err("samplerOrder must be each stage at most once, got TopK twice"));
    }

    #[test]
    fn built_in_presets_are_valid() {
        let presets = SamplingParams::presets();
        assert_eq!(presets.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["Precise", "Balanced", "Creative"]);
        for p in presets {
            p.params.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
    }

    #[test]
    fn missing_fields_take_defaults() {
        let p: SamplingParams = serde_json::from_str(r#"{"temperature": 0.2, "stop": ["\n\n"]}"#).unwrap();
        assert_eq!(p.temperature, 0.2);
        assert_eq!(p.top_k, 40);
        assert_eq!(p.stop, ["\n\n"]);
        assert_eq!(p.sampler_order, SamplerStage::DEFAULT_ORDER);
    }
}
