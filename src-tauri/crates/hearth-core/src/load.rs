//! How a model is loaded. Changing any of these needs a reload; sampling settings do not.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::sampling::whole;
use crate::{FieldError, FieldRange};

/// Load settings. `None` means "pick a sensible default for this machine and model".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct LoadParams {
    /// Context length in tokens; default min(trained length, [`LoadParams::AUTO_N_CTX_MAX`], what
    /// a quarter of free RAM holds).
    pub n_ctx: Option<u32>,
    /// Default: the number of physical cores to read prompts; replies are written on one fewer, or on
    /// every core when the engine measures it faster with that core free (`hearth-engine/src/threads.rs`).
    pub n_threads: Option<u32>,
    /// Tokens per decode call during prefill.
    pub n_batch: u32,
    /// Tokens per compute step within a batch (≤ n_batch).
    pub n_ubatch: u32,
    /// Layers to offload to a GPU: `None` lets llama.cpp offload all it can, `Some(0)` none.
    pub n_gpu_layers: Option<u32>,
    /// The GPU the layers go to, by the engine's name for it (`CUDA1`, `Vulkan0`): `None`, the
    /// first one found.
    pub device: Option<String>,
    pub flash_attention: FlashAttention,
    pub kv_cache_type: KvType,
    pub use_mmap: bool,
    pub use_mlock: bool,
    /// A Jinja chat template to use instead of the model's own.
    pub chat_template: Option<String>,
    /// Reuse the KV cache across turns (off only to measure what reuse saves).
    pub reuse_kv: bool,
    /// Other machines' devices, through llama.cpp's `rpc-server` on each ("host:port"): the
    /// layers are split over them and the local GPU by their free memory.
    pub rpc_servers: Vec<String>,
    /// The multimodal projector (`mmproj-*.gguf`) that lets the model read images, chosen by
    /// hand (the Model settings offer those beside the model: `ModelInfo::projectors`); `None`:
    /// the one beside the model file, if any.
    pub projector: Option<String>,
    /// The fewest tokens an image becomes (a small image is enlarged to it); `None`: the
    /// projector's own. Only projectors that keep an image's shape (Qwen-VL, Pixtral, Gemma 4…)
    /// take it; those that resize every image to one square ignore it.
    pub image_min_tokens: Option<u32>,
    /// The most tokens an image becomes (a large one is scaled down to it): fewer read faster and
    /// take less context, more see finer detail; `None`: the projector's own.
    pub image_max_tokens: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum FlashAttention {
    Auto,
    On,
    Off,
}

impl FlashAttention {
    /// Every mode, in the order a menu offers them.
    pub const ALL: [FlashAttention; 3] = [FlashAttention::Auto, FlashAttention::On, FlashAttention::Off];
}

/// Element type of the KV cache: smaller types fit longer contexts (quantized V needs flash attention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
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
            device: None,
            flash_attention: FlashAttention::Auto,
            kv_cache_type: KvType::F16,
            use_mmap: true,
            use_mlock: false,
            chat_template: None,
            reuse_kv: true,
            rpc_servers: Vec::new(),
            projector: None,
            image_min_tokens: None,
            image_max_tokens: None,
        }
    }
}

impl KvType {
    /// Every type, largest first, in the order a menu offers them.
    pub const ALL: [KvType; 3] = [KvType::F16, KvType::Q8_0, KvType::Q4_0];

    pub fn bytes_per_element(self) -> f64 {
        match self {
            KvType::F16 => 2.0,
            KvType::Q8_0 => 34.0 / 32.0,
            KvType::Q4_0 => 18.0 / 32.0,
        }
    }
}

/// Upper bounds that catch typos (a context of 10^9 tokens) before llama.cpp tries to allocate.
const MAX_N_CTX: u32 = 1 << 20;
const MAX_THREADS: u32 = 1024;
const MAX_BATCH: u32 = 1 << 16;
/// More than any projector makes of one image (Qwen2-VL's own bound is 16,384).
const MAX_IMAGE_TOKENS: u32 = 1 << 16;

/// The numeric ranges `validate` enforces (an unset context or thread count is "auto").
const LOAD_RANGES: &[FieldRange] = &[
    whole("nCtx", 16.0, MAX_N_CTX as f64, "between 16 and 1048576 tokens"),
    whole("nThreads", 1.0, MAX_THREADS as f64, "between 1 and 1024"),
    whole("nBatch", 1.0, MAX_BATCH as f64, "between 1 and 65536"),
    whole("nUbatch", 1.0, MAX_BATCH as f64, "between 1 and 65536, at most the batch size"),
    whole("imageMinTokens", 1.0, MAX_IMAGE_TOKENS as f64, "between 1 and 65536 tokens"),
    whole("imageMaxTokens", 1.0, MAX_IMAGE_TOKENS as f64, "between 1 and 65536 tokens"),
];

impl LoadParams {
    /// The longest context "auto" picks, memory and training allowing.
    pub const AUTO_N_CTX_MAX: u32 = 32_768;

    /// llama.cpp's limit (GGML_RPC_MAX_SERVERS).
    pub const MAX_RPC_SERVERS: usize = 16;

    pub fn ranges() -> &'static [FieldRange] {
        LOAD_RANGES
    }

    /// Combinations llama.cpp refuses with an unhelpful message (or aborts on), refused here in words.
    pub fn validate(&self) -> Result<(), FieldError> {
        let bad = |field: &str, message: String| Err(FieldError::new(field, message));
        if self.kv_cache_type != KvType::F16 && self.flash_attention == FlashAttention::Off {
            return bad("kvCacheType,flashAttention", "a quantized KV cache needs flash attention (auto or on)".into());
        }
        // The ranges the window is shown, in the words it is shown them.
        for range in LOAD_RANGES {
            let (value, label) = match range.key {
                "nCtx" => (self.n_ctx, "context length"),
                "nThreads" => (self.n_threads, "threads"),
                "nBatch" => (Some(self.n_batch), "the batch size"),
                "nUbatch" => (Some(self.n_ubatch), "ubatch"),
                "imageMinTokens" => (self.image_min_tokens, "the fewest tokens an image becomes"),
                "imageMaxTokens" => (self.image_max_tokens, "the most tokens an image becomes"),
                _ => continue, // A range without a check here fails the_ranges_are_what_validate_enforces.
            };
            if value.is_some_and(|v| !(range.min..=range.max).contains(&f64::from(v))) {
                return bad(range.key, format!("{label} must be {}", range.text));
            }
        }
        if self.n_ubatch > self.n_batch {
            return bad("nUbatch,nBatch", format!("ubatch ({}) must be at most the batch size ({})", self.n_ubatch, self.n_batch));
        }
        if let (Some(min), Some(max)) = (self.image_min_tokens, self.image_max_tokens)
            && min > max
        {
            return bad("imageMinTokens,imageMaxTokens", format!("an image's fewest tokens ({min}) must be at most its most ({max})"));
        }
        if self.chat_template.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return bad("chatTemplate", "the chat template override is empty: clear it to use the model's own".into());
        }
        if self.device.as_deref().is_some_and(|d| d.trim().is_empty()) {
            return bad("device", "the device is empty: choose one, or auto for the first GPU".into());
        }
        if self.rpc_servers.len() > Self::MAX_RPC_SERVERS {
            return bad("rpcServers", format!("at most {} RPC servers", Self::MAX_RPC_SERVERS));
        }
        if let Some(bad_endpoint) = self.rpc_servers.iter().find(|e| !is_endpoint(e)) {
            return bad("rpcServers", format!("{bad_endpoint:?} is not host:port (e.g. 192.168.1.20:50052)"));
        }
        Ok(())
    }
}

/// "host:port" as llama.cpp's RPC client reads it: a host, the last colon, a port from 1.
fn is_endpoint(endpoint: &str) -> bool {
    let Some((host, port)) = endpoint.rsplit_once(':') else { return false };
    let host_ok = !host.is_empty() && !host.chars().any(|c| c.is_whitespace() || c == '/');
    host_ok && port.parse::<u16>().is_ok_and(|p| p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_llama_cpp_would_refuse_or_abort_on() {
        let base = LoadParams::default();
        assert_eq!(base.validate(), Ok(()));
        let cases: &[(LoadParams, &str, &str)] = &[
            (
                LoadParams { kv_cache_type: KvType::Q8_0, flash_attention: FlashAttention::Off, ..base.clone() },
                "flash attention",
                "kvCacheType",
            ),
            (LoadParams { n_batch: 0, ..base.clone() }, "batch", "nBatch"),
            (LoadParams { n_ubatch: 0, ..base.clone() }, "batch", "nUbatch"),
            (LoadParams { n_batch: 256, n_ubatch: 512, ..base.clone() }, "at most the batch size", "nUbatch"),
            (LoadParams { n_ctx: Some(0), ..base.clone() }, "context length", "nCtx"),
            (LoadParams { n_ctx: Some(u32::MAX), ..base.clone() }, "context length", "nCtx"),
            (LoadParams { n_threads: Some(0), ..base.clone() }, "threads", "nThreads"),
            (LoadParams { chat_template: Some("  ".into()), ..base.clone() }, "template", "chatTemplate"),
            (LoadParams { image_min_tokens: Some(0), ..base.clone() }, "fewest tokens an image becomes", "imageMinTokens"),
            (LoadParams { image_max_tokens: Some(70_000), ..base.clone() }, "between 1 and 65536", "imageMaxTokens"),
            (
                LoadParams { image_min_tokens: Some(300), image_max_tokens: Some(256), ..base.clone() },
                "(300) must be at most its most (256)",
                "imageMinTokens",
            ),
            (LoadParams { device: Some(" ".into()), ..base.clone() }, "device is empty", "device"),
            (LoadParams { rpc_servers: vec!["10.0.0.7".into()], ..base.clone() }, "host:port", "rpcServers"),
            (LoadParams { rpc_servers: vec!["10.0.0.7:0".into()], ..base.clone() }, "host:port", "rpcServers"),
            (LoadParams { rpc_servers: vec![":50052".into()], ..base.clone() }, "host:port", "rpcServers"),
            (LoadParams { rpc_servers: vec!["http://10.0.0.7:50052".into()], ..base.clone() }, "host:port", "rpcServers"),
            (LoadParams { rpc_servers: vec!["10.0.0.7:50052".into(); 17], ..base.clone() }, "at most 16", "rpcServers"),
        ];
        let fine = LoadParams { rpc_servers: vec!["127.0.0.1:50052".into(), "gpu-box.local:50052".into()], ..base.clone() };
        assert_eq!(fine.validate(), Ok(()));
        let keys = serde_json::to_value(&base).unwrap();
        for (params, needle, field) in cases {
            let err = params.validate().unwrap_err();
            assert!(err.message.contains(needle), "{params:?}: {err}");
            assert!(err.fields().any(|f| f == *field), "{params:?}: {err:?}");
            // Every field named is one the window has.
            assert!(err.fields().all(|f| keys.get(f).is_some()), "{err:?}");
        }
    }

    /// The ranges the window is told are the ones `validate` enforces, at both ends.
    #[test]
    fn the_ranges_are_what_validate_enforces() {
        for range in LoadParams::ranges() {
            for (value, ok) in [(range.min, true), (range.max, true), (range.min - 1.0, false), (range.max + 1.0, false)] {
                let mut json = serde_json::to_value(LoadParams { n_batch: MAX_BATCH, ..LoadParams::default() }).unwrap();
                json[range.key] = serde_json::json!(value as u64);
                if range.key == "nBatch" {
                    json["nUbatch"] = serde_json::json!(1);
                }
                let params: LoadParams = serde_json::from_value(json).unwrap();
                assert_eq!(params.validate().is_ok(), ok, "{} = {value}: {:?}", range.key, params.validate());
            }
        }
    }

    #[test]
    fn missing_fields_take_defaults_and_enums_use_their_display_names() {
        let parsed: LoadParams = serde_json::from_str(r#"{"nCtx":2048,"kvCacheType":"q8_0","flashAttention":"on"}"#).unwrap();
        assert_eq!(
            parsed,
            LoadParams { n_ctx: Some(2048), kv_cache_type: KvType::Q8_0, flash_attention: FlashAttention::On, ..LoadParams::default() }
        );
    }
}
