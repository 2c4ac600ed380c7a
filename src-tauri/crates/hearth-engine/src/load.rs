//! How a model is loaded, and the defaults Hearth picks for this machine and model.

use std::num::NonZeroU32;

use llama_cpp_2::context::params::{KvCacheType, LlamaContextParams};
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;

use hearth_core::{FlashAttention, KvType, LoadParams, Offload};

/// Context length used when memory allows and the model was trained for at least this much.
const MAX_DEFAULT_N_CTX: u32 = LoadParams::AUTO_N_CTX_MAX;
/// Share of available memory the KV cache may take by default.
const KV_SHARE_OF_FREE_RAM: f64 = 0.25;

/// The model parameters for `load` on the devices `plan` chose: its GPUs alone (llama.cpp would
/// otherwise spread layers over every GPU it sees, the same card twice where CUDA and Vulkan
/// both see it) or none.
pub(crate) fn model_params(load: &LoadParams, plan: &crate::offload::Plan) -> LlamaModelParams {
    let params =
        LlamaModelParams::default().with_use_mmap(load.use_mmap).with_use_mlock(load.use_mlock).with_n_gpu_layers(plan.n_gpu_layers);
    let gpus: Option<Vec<usize>> = plan.gpus.iter().map(|gpu| crate::devices::device_index(&gpu.name)).collect();
    match gpus {
        Some(gpus) if gpus.is_empty() => params,
        // Indices from the list just read: the call cannot fail on them.
        Some(gpus) => params.with_devices(&gpus).unwrap_or_else(|_| LlamaModelParams::default().with_n_gpu_layers(0)),
        None => LlamaModelParams::default().with_use_mmap(load.use_mmap).with_use_mlock(load.use_mlock).with_n_gpu_layers(0),
    }
}

/// What the automatic choices resolved to for one model on this machine.
pub(crate) struct Resolved {
    pub n_ctx: u32,
    pub threads: Threads,
    /// Sliding-window layers keep every cell ([`swa_full`]).
    pub swa_full: bool,
}

/// llama.cpp's threads: `decode` writes the reply one token at a time, `batch` reads the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threads {
    pub decode: u32,
    pub batch: u32,
}

impl Threads {
    /// A model with every layer on a GPU: the CPU only looks up the prompt's embeddings and
    /// samples, and more of llama.cpp's threads would spin at each step's barrier for nothing,
    /// on the cores the window (and lavapipe's own threads) need.
    pub const ON_GPU: Threads = Threads { decode: 1, batch: 1 };

    /// The user's choice, or one thread per physical core, for both. With no choice, replies are
    /// then written on every core or one fewer, whichever the session measures faster
    /// (`crate::threads`): on 2 cores with SmolLM2, one thread writes as fast as two at a short
    /// context but a third slower at 1,800 tokens, and while another program spins a core two
    /// threads fall to a third of their speed where one keeps most of it (docs/benchmarks.md).
    pub fn choose(user: Option<u32>, physical: u32) -> Threads {
        let n = user.unwrap_or(physical).max(1);
        Threads { decode: n, batch: n }
    }

    /// Threads that read a draft ahead while the user types: one fewer than a prompt gets, so a
    /// core stays free for the window echoing the keys (every core when that read would outlast
    /// the gap before the next key: `crate::draft_threads`).
    pub fn draft(&self) -> u32 {
        self.batch.saturating_sub(1).max(1)
    }
}

/// A sliding-window model's window layers keep a full-size cache (every cell, as full attention
/// does) while that costs at most this many times their window cache (`n_swa` cells per sequence
/// plus a ubatch); beyond, the window cache alone. Measured on Gemma 3 1B's cache layout at
/// 8,192 tokens, 8 sequences (docs/benchmarks.md): 208 MiB of KV cache full-size, 131 MiB
/// windowed (32 for the 4 global layers, 99 for the 22 window layers' 4,608 cells); the same
/// tokens read again on regenerate and edit either way, as the window cache is seldom overwritten
/// within one chat; a chat parked in RAM the same size either way (llama.cpp saves a sequence
/// without the cells its next token cannot see, so both need checkpoints after a restore).
/// Full-size also lets rejected drafts be cut back (speculative decoding). At 32k tokens the
/// window saves 3.7× on that layout, 2.6× on Gemma 3 27B's (15.5 GiB full-size against 6.0).
const FULL_WINDOW_CACHES: u32 = 2;

/// Whether `model`'s sliding-window layers get a full-size cache in a context of `n_ctx` cells
/// shared by `n_seq` sequences.
pub(crate) fn swa_full(model: &LlamaModel, n_ctx: u32, n_ubatch: u32, n_seq: u32) -> bool {
    let window = model.n_swa();
    window == 0 || n_ctx <= FULL_WINDOW_CACHES * (window * n_seq + n_ubatch)
}

/// The context parameters for `model`, and what `load`'s automatic choices resolved to.
/// `n_seq` sequences share one unified cache of `n_ctx` cells, so each may use all of it;
/// `offload` says where the model's layers are.
pub(crate) fn context_params(load: &LoadParams, model: &LlamaModel, n_seq: u32, offload: &Offload) -> (Resolved, LlamaContextParams) {
    let n_ctx = load.n_ctx.unwrap_or_else(|| default_n_ctx(model, load.kv_cache_type, available_memory()));
    let threads = match load.n_threads {
        None if offload.all_on_gpu() => Threads::ON_GPU,
        user => Threads::choose(user, physical_cores()),
    };
    let flash = match load.flash_attention {
        FlashAttention::Auto => -1,
        FlashAttention::Off => 0,
        FlashAttention::On => 1,
    };
    let kv = llama_kv_type(load.kv_cache_type);
    let swa_full = swa_full(model, n_ctx, load.n_ubatch, n_seq);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(load.n_batch)
        .with_n_ubatch(load.n_ubatch)
        .with_n_seq_max(n_seq)
        .with_kv_unified(true)
        .with_n_threads(threads.decode as i32)
        .with_n_threads_batch(threads.batch as i32)
        .with_flash_attention_policy(flash)
        .with_type_k(kv)
        .with_type_v(kv)
        .with_swa_full(swa_full);
    (Resolved { n_ctx, threads, swa_full }, params)
}

fn llama_kv_type(kv: KvType) -> KvCacheType {
    match kv {
        KvType::F16 => KvCacheType::F16,
        KvType::Q8_0 => KvCacheType::Q8_0,
        KvType::Q4_0 => KvCacheType::Q4_0,
    }
}

/// min(trained length, MAX_DEFAULT_N_CTX, what KV_SHARE_OF_FREE_RAM of `free_bytes` holds),
/// in multiples of 256, at least 512.
fn default_n_ctx(model: &LlamaModel, kv: KvType, free_bytes: Option<u64>) -> u32 {
    let per_token = kv_bytes_per_token(model, kv);
    let fits = free_bytes.map_or(u32::MAX, |free| (free as f64 * KV_SHARE_OF_FREE_RAM / per_token.max(1.0)) as u32);
    let n = model.n_ctx_train().min(MAX_DEFAULT_N_CTX).min(fits);
    (n / 256 * 256).max(512)
}

/// Bytes of keys and values one token takes in the cache (every layer).
fn kv_bytes_per_token(model: &LlamaModel, kv: KvType) -> f64 {
    let head_dim = model.n_embd() as f64 / f64::from(model.n_head().max(1));
    2.0 * f64::from(model.n_layer()) * f64::from(model.n_head_kv()) * head_dim * kv.bytes_per_element()
}

/// Bytes the KV cache of an `n_ctx`-cell context takes.
pub(crate) fn kv_bytes(model: &LlamaModel, kv: KvType, n_ctx: u32) -> u64 {
    (kv_bytes_per_token(model, kv) * f64::from(n_ctx)) as u64
}

/// MemAvailable from /proc/meminfo (Linux); `None` elsewhere.
pub(crate) fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Physical cores (hyper-threads share a core's arithmetic units, which llama.cpp saturates).
pub fn physical_cores() -> u32 {
    let logical = std::thread::available_parallelism().map_or(4, |n| n.get() as u32);
    let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") else { return logical };
    let mut cores = std::collections::HashSet::new();
    let mut physical = "";
    for line in cpuinfo.lines() {
        if let Some(v) = line.strip_prefix("physical id") {
            physical = v;
        } else if let Some(v) = line.strip_prefix("core id") {
            cores.insert((physical, v));
        }
    }
    if cores.is_empty() { logical } else { (cores.len() as u32).min(logical) }
}

#[cfg(test)]
mod tests {
    use super::Threads;

    #[test]
    fn automatic_threads_are_the_physical_cores_and_a_draft_leaves_one_free() {
        let cases = [
            // (user's choice, physical cores) → (decode, batch, a draft read while typing)
            (None, 1, (1, 1, 1)),
            (None, 2, (2, 2, 1)),
            (None, 16, (16, 16, 15)),
            (None, 0, (1, 1, 1)),
            (Some(2), 2, (2, 2, 1)),
            (Some(6), 16, (6, 6, 5)),
        ];
        for (user, physical, (decode, batch, draft)) in cases {
            let threads = Threads::choose(user, physical);
            assert_eq!((threads, threads.draft()), (Threads { decode, batch }, draft), "{user:?} on {physical} cores");
        }
    }
}
