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

/// llama.cpp draws a fresh random seed when given this value.
const RANDOM_SEED: u32 = u32::MAX;
/// Tokens that truncation stages always keep.
const MIN_KEEP: usize = 1;
/// Candidates mirostat v1 uses to estimate s_hat (llama.cpp's value).
const MIROSTAT_M: i32 = 100;

/// `n_ctx` stands in for a look-back window of -1 ("the whole context").
pub fn build(model: &LlamaModel, params: &SamplingParams, n_ctx: u32) -> Result<LlamaSampler, BackendError> {
    let mut chain = Vec::new();
    if let Some(constraint) = &params.constraint {
        chain.push(grammar(model, constraint)?);
    }
    let mut biases = logit_biases(model, &params.logit_bias)?;
    if params.ignore_eos {
        let vocab = model.vocab();
        biases.extend(vocab.tokens().filter(|&t| vocab.is_eog(t)).map(|t| LlamaLogitBias::new(t, f32::NEG_INFINITY)));
    }
    if !biases.is_empty() {
        chain.push(LlamaSampler::logit_bias(model.n_vocab(), &biases));
    }
    let seed = params.seed.unwrap_or(RANDOM_SEED);
    match params.mirostat {
        Mirostat::V1 => chain.extend([
            LlamaSampler::temp(params.temperature),
            LlamaSampler::mirostat(model.n_vocab(), seed, params.mirostat_tau, params.mirostat_eta, MIROSTAT_M),
        ]),
        Mirostat::V2 => chain.extend([
            LlamaSampler::temp(params.temperature),
            LlamaSampler::mirostat_v2(seed, params.mirostat_tau, params.mirostat_eta),
        ]),
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
                    .filter_map(|&stage| self::stage(model, params, stage, n_ctx)),
            );
            chain.push(if params.temperature <= 0.0 { LlamaSampler::greedy() } else { LlamaSampler::dist(seed) });
        }
    }
    Ok(LlamaSampler::chain_simple(chain))
}

/// The sampler for one stage, or `None` where the stage is at its neutral setting.
fn stage(model: &LlamaModel, p: &SamplingParams, stage: SamplerStage, n_ctx: u32) -> Option<LlamaSampler> {
    let window = |last_n: i32| if last_n < 0 { n_ctx as i32 } else { last_n };
    match stage {
        SamplerStage::Penalties => {
            let neutral = p.repeat_penalty == 1.0 && p.frequency_penalty == 0.0 && p.presence_penalty == 0.0;
            (p.repeat_last_n != 0 && !neutral).then(|| {
                LlamaSampler::penalties(
                    model.n_vocab(),
                    window(p.repeat_last_n),
                    p.repeat_penalty,
                    p.frequency_penalty,
                    p.presence_penalty,
                )
            })
        }
        SamplerStage::Dry => (p.dry_multiplier > 0.0 && p.dry_last_n != 0).then(|| {
            LlamaSampler::dry(
                model,
                p.dry_multiplier,
                p.dry_base,
                p.dry_allowed_length as i32,
                window(p.dry_last_n),
                &p.dry_sequence_breakers,
            )
        }),
        SamplerStage::TopNSigma => (p.top_n_sigma > 0.0).then(|| LlamaSampler::top_n_sigma(p.top_n_sigma)),
        SamplerStage::TopK => (p.top_k > 0).then(|| LlamaSampler::top_k(p.top_k as i32)),
        SamplerStage::TypicalP => (p.typical_p < 1.0).then(|| LlamaSampler::typical(p.typical_p, MIN_KEEP)),
        SamplerStage::TopP => (p.top_p < 1.0).then(|| LlamaSampler::top_p(p.top_p, MIN_KEEP)),
        SamplerStage::MinP => (p.min_p > 0.0).then(|| LlamaSampler::min_p(p.min_p, MIN_KEEP)),
        SamplerStage::Xtc => (p.xtc_probability > 0.0).then(|| {
            LlamaSampler::xtc(p.xtc_probability, p.xtc_threshold, MIN_KEEP, p.seed.unwrap_or(RANDOM_SEED))
        }),
        SamplerStage::Temperature => (p.temperature > 0.0).then(|| {
            if p.dynatemp_range > 0.0 {
                LlamaSampler::temp_ext(p.temperature, p.dynatemp_range, p.dynatemp_exponent)
            } else {
                LlamaSampler::temp(p.temperature)
            }
        }),
    }
}

fn grammar(model: &LlamaModel, constraint: &Constraint) -> Result<LlamaSampler, BackendError> {
    let gbnf = match constraint {
        Constraint::Gbnf(source) => source.clone(),
        Constraint::JsonSchema(schema) => llama_cpp_2::json_schema_to_grammar(schema)
            .map_err(|e| BackendError::InvalidRequest(format!("the JSON schema cannot be used: {e}")))?,
    };
    LlamaSampler::grammar(model, &gbnf, "root")
        .map_err(|e| BackendError::InvalidRequest(format!("the grammar does not parse: {e}")))
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
