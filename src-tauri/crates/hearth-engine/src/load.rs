//! How a model is loaded, and the defaults Hearth picks for this machine and model.

use std::num::NonZeroU32;

use llama_cpp_2::context::params::{KvCacheType, LlamaContextParams};
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;

/// Context length used when memory allows and the model was trained for at least this much.
const MAX_DEFAULT_N_CTX: u32 = 32_768;
/// Share of available memory the KV cache may take by default.
const KV_SHARE_OF_FREE_RAM: f64 = 0.25;

/// How a model is loaded. `None` means "pick a sensible default for this machine and model".
/// Changing any of these needs a reload; sampling settings do not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadParams {
    /// Context length in tokens; default min(trained length, 32768, what a quarter of free RAM holds).
    pub n_ctx: Option<u32>,
    /// Default: the number of physical cores.
    pub n_threads: Option<u32>,
    /// Tokens per decode call during prefill.
    pub n_batch: u32,
    /// Tokens per compute step within a batch (≤ n_batch).
    pub n_ubatch: u32,
    /// Layers to offload to a GPU: `None` lets llama.cpp offload all it can, `Some(0)` none.
    pub n_gpu_layers: Option<u32>,
    pub flash_attention: FlashAttention,
    pub kv_cache_type: KvType,
    pub use_mmap: bool,
    pub use_mlock: bool,
    /// A Jinja chat template to use instead of the model's own.
    pub chat_template: Option<String>,
    /// Reuse the KV cache across turns (off only to measure what reuse saves).
    pub reuse_kv: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashAttention {
    Auto,
    On,
    Off,
}

/// Element type of the KV cache: smaller types fit longer contexts (quantized V needs flash attention).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvType {
    F16,
    Q8_0,
    Q4_0,
}

impl Default for LoadParams {
    fn default() -> Self {
        LoadParams {
            n_ctx: None,
            n_threads: None,
            n_batch: 512,
            n_ubatch: 512,
            n_gpu_layers: None,
            flash_attention: FlashAttention::Auto,
            kv_cache_type: KvType::F16,
            use_mmap: true,
            use_mlock: false,
            chat_template: None,
            reuse_kv: true,
        }
    }
}

impl KvType {
    fn bytes_per_element(self) -> f64 {
        match self {
            KvType::F16 => 2.0,
            KvType::Q8_0 => 34.0 / 32.0,
            KvType::Q4_0 => 18.0 / 32.0,
        }
    }

    fn llama(self) -> KvCacheType {
        match self {
            KvType::F16 => KvCacheType::F16,
            KvType::Q8_0 => KvCacheType::Q8_0,
            KvType::Q4_0 => KvCacheType::Q4_0,
        }
    }
}

impl LoadParams {
    /// Combinations llama.cpp refuses with an unhelpful message, refused here in words.
    pub fn validate(&self) -> Result<(), String> {
        if self.kv_cache_type != KvType::F16 && self.flash_attention == FlashAttention::Off {
            return Err("a quantized KV cache needs flash attention (auto or on)".into());
        }
        if self.n_batch == 0 || self.n_ubatch == 0 {
            return Err("batch and ubatch sizes must be at least 1".into());
        }
        if self.n_ctx == Some(0) || self.n_threads == Some(0) {
            return Err("context length and threads must be at least 1".into());
        }
        Ok(())
    }

    pub(crate) fn model_params(&self) -> LlamaModelParams {
        let mut params = LlamaModelParams::default().with_use_mmap(self.use_mmap).with_use_mlock(self.use_mlock);
        if let Some(layers) = self.n_gpu_layers {
            params = params.with_n_gpu_layers(layers);
        }
        params
    }

    /// The context length and the context parameters for `model`.
    pub(crate) fn context_params(&self, model: &LlamaModel) -> (u32, LlamaContextParams) {
        let n_ctx = self.n_ctx.unwrap_or_else(|| default_n_ctx(model, self.kv_cache_type, available_memory()));
        let threads = self.n_threads.unwrap_or_else(physical_cores) as i32;
        let flash = match self.flash_attention {
            FlashAttention::Auto => -1,
            FlashAttention::Off => 0,
            FlashAttention::On => 1,
        };
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(self.n_batch)
            .with_n_ubatch(self.n_ubatch.min(self.n_batch))
            .with_n_threads(threads)
            .with_n_threads_batch(threads)
            .with_flash_attention_policy(flash)
            .with_type_k(self.kv_cache_type.llama())
            .with_type_v(self.kv_cache_type.llama());
        (n_ctx, params)
    }
}

/// min(trained length, MAX_DEFAULT_N_CTX, what KV_SHARE_OF_FREE_RAM of `free_bytes` holds),
/// in multiples of 256, at least 512.
fn default_n_ctx(model: &LlamaModel, kv: KvType, free_bytes: Option<u64>) -> u32 {
    let head_dim = model.n_embd() as f64 / f64::from(model.n_head().max(1));
    let per_token = 2.0 * f64::from(model.n_layer()) * f64::from(model.n_head_kv()) * head_dim * kv.bytes_per_element();
    let fits = free_bytes.map_or(u32::MAX, |free| (free as f64 * KV_SHARE_OF_FREE_RAM / per_token.max(1.0)) as u32);
    let n = model.n_ctx_train().min(MAX_DEFAULT_N_CTX).min(fits);
    (n / 256 * 256).max(512)
}

/// MemAvailable from /proc/meminfo (Linux); `None` elsewhere.
fn available_memory() -> Option<u64> {
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
