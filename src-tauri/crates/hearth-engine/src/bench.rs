//! The baseline Hearth's engine is measured against: a minimal llama-cpp-2 loop with no engine
//! thread, no template, no streaming — only prefill and greedy decode on the calling thread.

use std::num::NonZeroU32;
use std::path::Path;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;

use crate::devices::llama_backend;
use crate::{EngineError, LoadParams};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RawSpeed {
    pub prompt_tokens: usize,
    pub prefill_tps: f64,
    pub decode_tokens: usize,
    pub decode_tps: f64,
}

/// Prefills `prompt` in chunks of `n_batch`, then greedily decodes `n_decode` tokens (end-of-turn
/// ignored), timing each phase.
pub fn raw_llama_speed(
    path: &Path,
    threads: u32,
    n_ctx: u32,
    n_batch: u32,
    prompt: &str,
    n_decode: usize,
) -> Result<RawSpeed, EngineError> {
    let file = hearth_gguf::validate(path)?;
    let backend = llama_backend().map_err(|_| EngineError::Gone)?;
    let shown = path.display().to_string();
    // The device Hearth would load it on, as Hearth would.
    let load = LoadParams::default();
    let plan = crate::offload::plan(&load, &file, &crate::devices::report());
    let model =
        LlamaModel::load_from_file(backend, &file.path, &crate::load::model_params(&load, &plan)).map_err(|_| EngineError::Load {
            path: shown.clone(),
            reason: format!("llama.cpp refused it (architecture {})", file.architecture().unwrap_or("unknown")),
        })?;
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(n_batch)
        .with_n_ubatch(n_batch)
        .with_n_threads(threads as i32)
        .with_n_threads_batch(threads as i32);
    let mut ctx = model.new_context(backend, params).map_err(|_| EngineError::Context { path: shown, n_ctx })?;
    let tokens = model.vocab().tokenize(prompt.as_bytes(), true, true);
    let mut batch = LlamaBatch::new(n_batch as usize, 1);
    let fail = |e: &dyn std::fmt::Display| EngineError::Bench(e.to_string());

    let started = Instant::now();
    let mut pos = 0;
    for chunk in tokens.chunks(n_batch as usize) {
        batch.clear();
        for (i, &t) in chunk.iter().enumerate() {
            let last = pos as usize + i + 1 == tokens.len();
            batch.add(t, pos + i as i32, &[0], last).map_err(|e| fail(&e))?;
        }
        ctx.decode(&mut batch).map_err(|e| fail(&e))?;
        pos += chunk.len() as i32;
    }
    let mut sampler = LlamaSampler::greedy();
    let mut token = sampler.sample(&ctx, batch.n_tokens() - 1);
    let prefill = started.elapsed().as_secs_f64();

    let started = Instant::now();
    for _ in 0..n_decode {
        batch.clear();
        batch.add(token, pos, &[0], true).map_err(|e| fail(&e))?;
        ctx.decode(&mut batch).map_err(|e| fail(&e))?;
        pos += 1;
        token = sampler.sample(&ctx, 0);
    }
    let decode = started.elapsed().as_secs_f64();
    Ok(RawSpeed {
        prompt_tokens: tokens.len(),
        prefill_tps: tokens.len() as f64 / prefill,
        decode_tokens: n_decode,
        decode_tps: n_decode as f64 / decode,
    })
}
