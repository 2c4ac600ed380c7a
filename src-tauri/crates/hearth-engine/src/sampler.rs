//! Turns validated [`SamplingParams`] into a llama.cpp sampler chain.
//!
//! The chain is: grammar (if any) → logit bias → the truncation stages in the user's order →
//! the final pick (`dist` with the seed, or `greedy` at temperature 0). Mirostat replaces the
//! stages with temperature + mirostat, as llama.cpp does.

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::logit_bias::LlamaLogitBias;

use hearth_core::{BackendError, BiasTarget, Constraint, LogitBias, Mirostat, SamplerStage, SamplingParams};

use crate::tools::ToolGrammar;

/// llama.cpp draws a fresh random seed when given this value.
const RANDOM_SEED: u32 = u32::MAX;
/// Tokens that truncation stages always keep.
const MIN_KEEP: usize = 1;
/// Candidates mirostat v1 uses to estimate s_hat (llama.cpp's value).
const MIROSTAT_M: i32 = 100;

/// One sampler of the chain, with the values it runs with: what [`plan`] decides, before any
/// llama.cpp object exists.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Grammar(Constraint),
    /// The user's biases (resolved against the vocabulary when built), and whether end-of-
    /// generation tokens are forbidden (`ignore_eos`).
    LogitBias {
        biases: Vec<LogitBias>,
        ban_eog: bool,
    },
    Penalties {
        last_n: i32,
        repeat: f32,
        frequency: f32,
        presence: f32,
    },
    Dry {
        multiplier: f32,
        base: f32,
        allowed_length: i32,
        last_n: i32,
        breakers: Vec<String>,
    },
    TopNSigma(f32),
    TopK(i32),
    TypicalP(f32),
    TopP(f32),
    MinP(f32),
    Xtc {
        probability: f32,
        threshold: f32,
        seed: u32,
    },
    Temperature(f32),
    /// Dynamic temperature: `temperature ± range`, shaped by `exponent`.
    DynamicTemperature {
        temperature: f32,
        range: f32,
        exponent: f32,
    },
    MirostatV1 {
        seed: u32,
        tau: f32,
        eta: f32,
    },
    MirostatV2 {
        seed: u32,
        tau: f32,
        eta: f32,
    },
    Greedy,
    Dist(u32),
}

/// The chain for `params`, in order. `n_ctx` stands in for a look-back window of -1 ("the
/// whole context").
pub fn plan(params: &SamplingParams, n_ctx: u32) -> Vec<Step> {
    let mut chain = Vec::new();
    if let Some(constraint) = &params.constraint {
        chain.push(Step::Grammar(constraint.clone()));
    }
    if !params.logit_bias.is_empty() || params.ignore_eos {
        chain.push(Step::LogitBias { biases: params.logit_bias.clone(), ban_eog: params.ignore_eos });
    }
    let seed = params.seed.unwrap_or(RANDOM_SEED);
    let (tau, eta) = (params.mirostat_tau, params.mirostat_eta);
    match params.mirostat {
        Mirostat::V1 => chain.extend([Step::Temperature(params.temperature), Step::MirostatV1 { seed, tau, eta }]),
        Mirostat::V2 => chain.extend([Step::Temperature(params.temperature), Step::MirostatV2 { seed, tau, eta }]),
        Mirostat::Off => {
            let greedy = params.temperature <= 0.0;
            chain.extend(
                params
                    .sampler_order
                    .iter()
                    // Truncation never removes the most likely token, so under greedy decoding
                    // only the stages that change logits matter; skipping the rest keeps the gap
                    // between decode calls short (llama.cpp's worker threads stop spinning on a
                    // long one, which costs far more than the stage itself).
                    .filter(|&&stage| !greedy || matches!(stage, SamplerStage::Penalties | SamplerStage::Dry))
                    .filter_map(|&stage| self::stage(params, stage, n_ctx)),
            );
            chain.push(if greedy { Step::Greedy } else { Step::Dist(seed) });
        }
    }
    chain
}

/// The llama.cpp chain for `params` on `model`, first kept to the calls of `tools` if offered.
pub fn build(model: &LlamaModel, params: &SamplingParams, tools: Option<&ToolGrammar>, n_ctx: u32) -> Result<LlamaSampler, BackendError> {
    let mut chain = Vec::new();
    if let Some(tools) = tools {
        if params.constraint.is_some() {
            return Err(BackendError::InvalidRequest("give tools or a grammar (or JSON schema), not both".into()));
        }
        chain.push(tool_grammar(model, tools)?);
    }
    for step in plan(params, n_ctx) {
        chain.push(sampler(model, step)?);
    }
    Ok(LlamaSampler::chain_simple(chain))
}

/// The grammar of the calls: bound from the first token, or once the model opens a call.
fn tool_grammar(model: &LlamaModel, tools: &ToolGrammar) -> Result<LlamaSampler, BackendError> {
    let built = match tools.trigger {
        None => LlamaSampler::grammar(model, &tools.gbnf, "root"),
        Some(trigger) => LlamaSampler::grammar_lazy(model, &tools.gbnf, "root", [trigger], &[]),
    };
    built.map_err(|e| BackendError::InvalidRequest(format!("the tools' grammar does not parse: {e}")))
}

/// Only what restricts which tokens may come — grammar, logit bias, banned end of turn — for
/// strategies that choose by the model's own probabilities (beam search); `None` when free.
pub fn constraints(model: &LlamaModel, params: &SamplingParams) -> Result<Option<LlamaSampler>, BackendError> {
    let steps: Vec<LlamaSampler> = plan(params, 0)
        .into_iter()
        .filter(|step| matches!(step, Step::Grammar(_) | Step::LogitBias { .. }))
        .map(|step| sampler(model, step))
        .collect::<Result<_, _>>()?;
    Ok((!steps.is_empty()).then(|| LlamaSampler::chain_simple(steps)))
}

fn sampler(model: &LlamaModel, step: Step) -> Result<LlamaSampler, BackendError> {
    Ok(match step {
        Step::Grammar(constraint) => grammar(model, &constraint)?,
        Step::LogitBias { biases, ban_eog } => {
            let mut resolved = logit_biases(model, &biases)?;
            if ban_eog {
                let vocab = model.vocab();
                resolved.extend(vocab.tokens().filter(|&t| vocab.is_eog(t)).map(|t| LlamaLogitBias::new(t, f32::NEG_INFINITY)));
            }
            LlamaSampler::logit_bias(model.n_vocab(), &resolved)
        }
        Step::Penalties { last_n, repeat, frequency, presence } => {
            LlamaSampler::penalties(model.n_vocab(), last_n, repeat, frequency, presence)
        }
        Step::Dry { multiplier, base, allowed_length, last_n, breakers } => {
            LlamaSampler::dry(model, multiplier, base, allowed_length, last_n, &breakers)
        }
        Step::TopNSigma(n) => LlamaSampler::top_n_sigma(n),
        Step::TopK(k) => LlamaSampler::top_k(k),
        Step::TypicalP(p) => LlamaSampler::typical(p, MIN_KEEP),
        Step::TopP(p) => LlamaSampler::top_p(p, MIN_KEEP),
        Step::MinP(p) => LlamaSampler::min_p(p, MIN_KEEP),
        Step::Xtc { probability, threshold, seed } => LlamaSampler::xtc(probability, threshold, MIN_KEEP, seed),
        Step::Temperature(t) => LlamaSampler::temp(t),
        Step::DynamicTemperature { temperature, range, exponent } => LlamaSampler::temp_ext(temperature, range, exponent),
        Step::MirostatV1 { seed, tau, eta } => LlamaSampler::mirostat(model.n_vocab(), seed, tau, eta, MIROSTAT_M),
        Step::MirostatV2 { seed, tau, eta } => LlamaSampler::mirostat_v2(seed, tau, eta),
        Step::Greedy => LlamaSampler::greedy(),
        Step::Dist(seed) => LlamaSampler::dist(seed),
    })
}

/// The step for one stage, or `None` where the stage is at its neutral setting.
fn stage(p: &SamplingParams, stage: SamplerStage, n_ctx: u32) -> Option<Step> {
    let window = |last_n: i32| if last_n < 0 { n_ctx as i32 } else { last_n };
    match stage {
        SamplerStage::Penalties => {
            let neutral = p.repeat_penalty == 1.0 && p.frequency_penalty == 0.0 && p.presence_penalty == 0.0;
            (p.repeat_last_n != 0 && !neutral).then(|| Step::Penalties {
                last_n: window(p.repeat_last_n),
                repeat: p.repeat_penalty,
                frequency: p.frequency_penalty,
                presence: p.presence_penalty,
            })
        }
        SamplerStage::Dry => (p.dry_multiplier > 0.0 && p.dry_last_n != 0).then(|| Step::Dry {
            multiplier: p.dry_multiplier,
            base: p.dry_base,
            allowed_length: p.dry_allowed_length as i32,
            last_n: window(p.dry_last_n),
            breakers: p.dry_sequence_breakers.clone(),
        }),
        SamplerStage::TopNSigma => (p.top_n_sigma > 0.0).then_some(Step::TopNSigma(p.top_n_sigma)),
        SamplerStage::TopK => (p.top_k > 0).then_some(Step::TopK(p.top_k as i32)),
        SamplerStage::TypicalP => (p.typical_p < 1.0).then_some(Step::TypicalP(p.typical_p)),
        SamplerStage::TopP => (p.top_p < 1.0).then_some(Step::TopP(p.top_p)),
        SamplerStage::MinP => (p.min_p > 0.0).then_some(Step::MinP(p.min_p)),
        SamplerStage::Xtc => (p.xtc_probability > 0.0).then(|| Step::Xtc {
            probability: p.xtc_probability,
            threshold: p.xtc_threshold,
            seed: p.seed.unwrap_or(RANDOM_SEED),
        }),
        SamplerStage::Temperature => (p.temperature > 0.0).then_some(if p.dynatemp_range > 0.0 {
            Step::DynamicTemperature { temperature: p.temperature, range: p.dynatemp_range, exponent: p.dynatemp_exponent }
        } else {
            Step::Temperature(p.temperature)
        }),
    }
}

fn grammar(model: &LlamaModel, constraint: &Constraint) -> Result<LlamaSampler, BackendError> {
    let gbnf = match constraint {
        Constraint::Gbnf(source) => source.clone(),
        Constraint::JsonSchema(schema) => llama_cpp_2::json_schema_to_grammar(schema)
            .map_err(|e| BackendError::InvalidRequest(format!("the JSON schema cannot be used: {e}")))?,
    };
    LlamaSampler::grammar(model, &gbnf, "root").map_err(|e| BackendError::InvalidRequest(format!("the grammar does not parse: {e}")))
}

/// Resolves bias targets to token ids. A text biases its tokens both as written and with a
/// leading space, the form a word takes inside a sentence.
fn logit_biases(model: &LlamaModel, biases: &[LogitBias]) -> Result<Vec<LlamaLogitBias>, BackendError> {
    let vocab = model.vocab();
    let n_vocab = model.n_vocab();
    let mut out = Vec::new();
    for b in biases {
        let bias = if b.bias <= LogitBias::BAN { f32::NEG_INFINITY } else { b.bias };
        match &b.target {
            BiasTarget::Token { id } => {
                if i64::from(*id) >= i64::from(n_vocab) {
                    return Err(BackendError::InvalidRequest(format!(
                        "logit bias names token {id}, but the model's vocabulary has {n_vocab} tokens"
                    )));
                }
                out.push(LlamaLogitBias::new(LlamaToken(*id as i32), bias));
            }
            BiasTarget::Text { text } => {
                for form in [text.clone(), format!(" {text}")] {
                    for token in vocab.tokenize(form.as_bytes(), false, false) {
                        out.push(LlamaLogitBias::new(token, bias));
                    }
                }
            }
        }
    }
    out.sort_by_key(|b| b.token().0);
    out.dedup_by_key(|b| b.token().0);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use hearth_core::BiasTarget;

    use super::*;

    const N_CTX: u32 = 4096;

    fn with(change: impl FnOnce(&mut SamplingParams)) -> SamplingParams {
        let mut params = SamplingParams { seed: Some(7), ..SamplingParams::default() };
        change(&mut params);
        params
    }

    /// The defaults' truncation: top-k 40, top-p 0.95, min-p 0.05, temperature 0.8.
    fn default_stages() -> Vec<Step> {
        vec![Step::TopK(40), Step::TopP(0.95), Step::MinP(0.05), Step::Temperature(0.8)]
    }

    fn then(mut steps: Vec<Step>, last: Step) -> Vec<Step> {
        steps.push(last);
        steps
    }

    /// What each setting puts in the chain, and where (beside the real-model tests, which check
    /// what the chain does).
    #[test]
    fn the_chain_follows_the_settings() {
        let ban = LogitBias { target: BiasTarget::Token { id: 5 }, bias: LogitBias::BAN };
        let cases: Vec<(&str, SamplingParams, Vec<Step>)> = vec![
            ("defaults: neutral stages are left out", with(|_| {}), then(default_stages(), Step::Dist(7))),
            ("no seed: llama.cpp draws one", with(|p| p.seed = None), then(default_stages(), Step::Dist(RANDOM_SEED))),
            ("greedy: only the stages that change logits", with(|p| p.temperature = 0.0), vec![Step::Greedy]),
            (
                "greedy keeps penalties, with -1 as the whole context",
                with(|p| {
                    p.temperature = 0.0;
                    p.repeat_penalty = 1.1;
                    p.repeat_last_n = -1;
                }),
                vec![Step::Penalties { last_n: N_CTX as i32, repeat: 1.1, frequency: 0.0, presence: 0.0 }, Step::Greedy],
            ),
            (
                "the user's order",
                with(|p| p.sampler_order = vec![SamplerStage::Temperature, SamplerStage::MinP, SamplerStage::TopK]),
                vec![Step::Temperature(0.8), Step::MinP(0.05), Step::TopK(40), Step::Dist(7)],
            ),
            (
                "a stage left out of the order does not run",
                with(|p| p.sampler_order = vec![SamplerStage::Temperature]),
                vec![Step::Temperature(0.8), Step::Dist(7)],
            ),
            (
                "dynamic temperature",
                with(|p| {
                    p.dynatemp_range = 0.3;
                    p.sampler_order = vec![SamplerStage::Temperature];
                }),
                vec![Step::DynamicTemperature { temperature: 0.8, range: 0.3, exponent: 1.0 }, Step::Dist(7)],
            ),
            (
                "XTC and DRY where the order puts them",
                with(|p| {
                    p.xtc_probability = 0.5;
                    p.dry_multiplier = 0.8;
                    p.sampler_order = vec![SamplerStage::Xtc, SamplerStage::Dry];
                }),
                vec![
                    Step::Xtc { probability: 0.5, threshold: 0.1, seed: 7 },
                    Step::Dry {
                        multiplier: 0.8,
                        base: 1.75,
                        allowed_length: 2,
                        last_n: N_CTX as i32,
                        breakers: ["\n", ":", "\"", "*"].map(String::from).to_vec(),
                    },
                    Step::Dist(7),
                ],
            ),
            (
                "mirostat replaces the stages",
                with(|p| p.mirostat = Mirostat::V2),
                vec![Step::Temperature(0.8), Step::MirostatV2 { seed: 7, tau: 5.0, eta: 0.1 }],
            ),
            (
                "grammar first, then biases",
                with(|p| {
                    p.constraint = Some(Constraint::Gbnf("root ::= \"a\"".into()));
                    p.logit_bias = vec![ban.clone()];
                    p.ignore_eos = true;
                    p.temperature = 0.0;
                }),
                vec![
                    Step::Grammar(Constraint::Gbnf("root ::= \"a\"".into())),
                    Step::LogitBias { biases: vec![ban.clone()], ban_eog: true },
                    Step::Greedy,
                ],
            ),
        ];
        for (name, params, want) in cases {
            assert_eq!(plan(&params, N_CTX), want, "{name}");
        }
    }
}
