//! Turns validated [`SamplingParams`] into a llama.cpp sampler chain.

use llama_cpp_2::sampling::LlamaSampler;

use hearth_core::SamplingParams;

/// llama.cpp draws a fresh random seed when given this value.
const RANDOM_SEED: u32 = u32::MAX;

pub fn build(params: &SamplingParams) -> LlamaSampler {
    if params.temperature <= 0.0 {
        return LlamaSampler::greedy();
    }
    LlamaSampler::chain_simple([
        LlamaSampler::temp(params.temperature),
        LlamaSampler::dist(params.seed.unwrap_or(RANDOM_SEED)),
    ])
}
