//! Will a model run here? Weights + KV cache at the chosen context + compute buffers, against
//! the free memory (and GPU memory where there is a GPU).
//!
//! The estimate follows llama.cpp's allocations: the weights are the file (mapped whole); the KV
//! cache is `layers × context × kv_heads × (key + value width)` elements of the cache type; the
//! compute buffer holds one micro-batch's activations and logits (`n_ubatch × (vocab + 8 ×
//! embedding)` floats) plus a fixed margin for the runtime itself.

use hearth_core::KvType;

use crate::{ModelFacts, ModelShape};
use serde::Serialize;
use ts_rs::TS;

/// Micro-batch size the engine loads with (llama.cpp's default).
const UBATCH: u64 = 512;
/// Runtime, threads' scratch and allocator slack beyond the named buffers.
const RUNTIME_MARGIN: u64 = 128 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    pub free_ram: u64,
    pub free_vram: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum FitVerdict {
    /// Fits in memory (on the GPU when there is one).
    Fits,
    /// Fits with `layers` of `total_layers` on the GPU and the rest in RAM.
    #[serde(rename_all = "camelCase")]
    GpuLayers {
        layers: u32,
        total_layers: u32,
    },
    TooLarge,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FitEstimate {
    pub facts: ModelFacts,
    pub context_length: u32,
    #[ts(type = "number")]
    pub weights_bytes: u64,
    #[ts(type = "number")]
    pub kv_cache_bytes: u64,
    #[ts(type = "number")]
    pub compute_bytes: u64,
    #[ts(type = "number")]
    pub total_bytes: u64,
    #[ts(type = "number")]
    pub free_ram_bytes: u64,
    #[ts(type = "number | null")]
    pub free_vram_bytes: Option<u64>,
    pub verdict: FitVerdict,
}

/// Bytes of one cached element of `kv` (quantized types store blocks of 32 with a scale).
fn kv_element_bytes(kv: KvType) -> (u64, u64) {
    match kv {
        KvType::F16 => (2, 1),
        KvType::Q8_0 => (34, 32),
        KvType::Q4_0 => (18, 32),
    }
}

pub fn kv_cache_bytes(shape: &ModelShape, context: u32, kv: KvType) -> u64 {
    let (num, den) = kv_element_bytes(kv);
    let elements =
        u64::from(shape.layers) * u64::from(context) * u64::from(shape.kv_heads) * u64::from(shape.key_length + shape.value_length);
    elements * num / den
}

pub fn compute_bytes(shape: &ModelShape) -> u64 {
    UBATCH * (u64::from(shape.vocab) + 8 * u64::from(shape.embedding)) * 4 + RUNTIME_MARGIN
}

/// The estimate for a model of `weights` bytes at `context` tokens (its own when `None`).
pub fn estimate(facts: ModelFacts, shape: &ModelShape, weights: u64, context: Option<u32>, kv: KvType, memory: Memory) -> FitEstimate {
    let context = context.unwrap_or(shape.context_length).max(1);
    let kv_cache = kv_cache_bytes(shape, context, kv);
    let compute = compute_bytes(shape);
    let total = weights + kv_cache + compute;
    FitEstimate {
        facts,
        context_length: context,
        weights_bytes: weights,
        kv_cache_bytes: kv_cache,
        compute_bytes: compute,
        total_bytes: total,
        free_ram_bytes: memory.free_ram,
        free_vram_bytes: memory.free_vram,
        verdict: verdict(shape.layers, weights + kv_cache, compute, memory),
    }
}

/// How many of a model's repeating layers to put on a GPU with `vram` bytes free by default: all
/// when the whole model fits beside the compute buffer, else as many as fit (the engine's
/// automatic offload, the same arithmetic as the verdict the model manager shows).
pub fn gpu_layers(shape: &ModelShape, weights: u64, context: u32, kv: KvType, vram: u64) -> u32 {
    let per_layer_total = weights + kv_cache_bytes(shape, context, kv);
    let compute = compute_bytes(shape);
    let memory = Memory { free_ram: u64::MAX, free_vram: Some(vram) };
    match verdict(shape.layers, per_layer_total, compute, memory) {
        FitVerdict::GpuLayers { layers, .. } => layers,
        FitVerdict::Fits if vram > per_layer_total + compute => shape.layers,
        FitVerdict::Fits | FitVerdict::TooLarge => 0,
    }
}

/// Layers (with their share of weights and cache) go to the GPU while they fit beside the
/// compute buffer; the rest must fit in RAM.
fn verdict(layers: u32, per_layer_total: u64, compute: u64, memory: Memory) -> FitVerdict {
    let total = per_layer_total + compute;
    let Some(vram) = memory.free_vram.filter(|&v| v > compute) else {
        return if total <= memory.free_ram { FitVerdict::Fits } else { FitVerdict::TooLarge };
    };
    // The output layer and embeddings travel with the layers: count them as one more layer.
    let per_layer = per_layer_total.div_ceil(u64::from(layers) + 1);
    let on_gpu = ((vram - compute) / per_layer.max(1)).min(u64::from(layers)) as u32;
    if on_gpu == layers && total <= vram {
        return FitVerdict::Fits;
    }
    let in_ram = total.saturating_sub(u64::from(on_gpu) * per_layer);
    match (on_gpu, in_ram <= memory.free_ram) {
        (_, false) => FitVerdict::TooLarge,
        (0, true) => FitVerdict::Fits,
        (layers_on_gpu, true) => FitVerdict::GpuLayers { layers: layers_on_gpu, total_layers: layers },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    /// SmolLM2-135M's shape, as its header says.
    const SMOLLM2: ModelShape = ModelShape {
        layers: 30,
        embedding: 576,
        heads: 9,
        kv_heads: 3,
        key_length: 64,
        value_length: 64,
        vocab: 49_152,
        context_length: 8192,
    };

    #[test]
    fn the_kv_cache_matches_llama_cpps_own_figure() {
        // llama.cpp logs "llama_kv_cache: size = 180.00 MiB (8192 cells, 30 layers, 1/1 seqs), K (f16): 90.00 MiB, V (f16): 90.00 MiB".
        assert_eq!(kv_cache_bytes(&SMOLLM2, 8192, KvType::F16), 180 << 20);
        assert_eq!(kv_cache_bytes(&SMOLLM2, 8192, KvType::Q8_0), (180 << 20) * 17 / 32);
        assert_eq!(kv_cache_bytes(&SMOLLM2, 2048, KvType::Q4_0), (45 << 20) * 9 / 32);
    }

    #[test]
    fn verdicts_follow_the_memory_there_is() {
        // (model+cache bytes, compute bytes, free RAM, free VRAM) → verdict
        let cases = [
            (GIB, GIB / 4, 4 * GIB, None, FitVerdict::Fits),
            (8 * GIB, GIB / 4, 4 * GIB, None, FitVerdict::TooLarge),
            (8 * GIB, GIB / 4, 16 * GIB, Some(24 * GIB), FitVerdict::Fits),
            (31 * GIB, GIB, 32 * GIB, Some(9 * GIB), FitVerdict::GpuLayers { layers: 8, total_layers: 30 }),
            (31 * GIB, GIB, 4 * GIB, Some(9 * GIB), FitVerdict::TooLarge),
            // A GPU too small for even its compute buffer: the CPU does it all.
            (GIB, GIB, 4 * GIB, Some(GIB / 2), FitVerdict::Fits),
        ];
        for (model, compute, ram, vram, expected) in cases {
            let got = verdict(30, model, compute, Memory { free_ram: ram, free_vram: vram });
            assert_eq!(got, expected, "{model} {compute} {ram} {vram:?}");
        }
    }
}
