//! What a user wants to know about a model file, and the shape a memory estimate needs, read
//! from its GGUF metadata.

use hearth_core::{ReasoningFormat, reasoning_format};
use serde::Serialize;
use ts_rs::TS;

/// The context length assumed for a model whose header does not give one.
pub const ASSUMED_CONTEXT_LENGTH: u32 = 4096;

use crate::{MetaValue, ValidatedGguf};

/// A model's facts as shown in the library and before a download.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelFacts {
    pub architecture: Option<String>,
    /// Parameter count (elements of all tensors).
    #[ts(type = "number | null")]
    pub parameters: Option<u64>,
    /// The quantization the file was made with ("Q4_K_M"), from `general.file_type`.
    pub quantization: Option<String>,
    /// The context length the model was trained for.
    pub context_length: Option<u32>,
    pub layers: Option<u32>,
    pub has_chat_template: bool,
    /// How the model reasons, as its chat template says.
    pub reasoning: ReasoningFormat,
    /// An embedding model (its tokens pooled into one vector, for retrieval), not one to chat with.
    pub embedding: bool,
}

/// The numbers a KV-cache and compute-buffer estimate needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelShape {
    pub layers: u32,
    pub embedding: u32,
    pub heads: u32,
    pub kv_heads: u32,
    /// Width of one head's key and value vectors.
    pub key_length: u32,
    pub value_length: u32,
    pub vocab: u32,
    pub context_length: u32,
}

impl ValidatedGguf {
    pub fn facts(&self) -> ModelFacts {
        ModelFacts {
            architecture: self.architecture().map(str::to_owned),
            parameters: (self.parameters > 0).then_some(self.parameters),
            quantization: self.int("general.file_type").and_then(|t| file_type_name(t as i64)).map(str::to_owned),
            context_length: self.arch_u32("context_length"),
            layers: self.arch_u32("block_count"),
            has_chat_template: self.str("tokenizer.chat_template").is_some_and(|t| !t.trim().is_empty()),
            reasoning: self.str("tokenizer.chat_template").map_or(ReasoningFormat::None, reasoning_format),
            embedding: self.is_embedding_model(),
        }
    }

    /// Whether the model pools its tokens into one vector (llama.cpp's `pooling_type`, any but
    /// none) or reads them all at once (non-causal attention): an encoder for embeddings.
    pub fn is_embedding_model(&self) -> bool {
        let arch = self.architecture().unwrap_or_default();
        let pools = self.int(&format!("{arch}.pooling_type")).is_some_and(|t| t > 0);
        let encoder = matches!(self.metadata.get(&format!("{arch}.attention.causal")), Some(MetaValue::Bool(false)));
        pools || encoder
    }

    /// The model's shape, when its metadata says enough (transformers with attention do).
    pub fn shape(&self) -> Option<ModelShape> {
        let layers = self.arch_u32("block_count")?;
        let embedding = self.arch_u32("embedding_length")?;
        let heads = self.arch_u32("attention.head_count").filter(|&h| h > 0)?;
        let kv_heads = self.arch_u32("attention.head_count_kv").unwrap_or(heads);
        let head = embedding / heads;
        let vocab = match self.metadata.get("tokenizer.ggml.tokens") {
            Some(MetaValue::Array(n)) => u32::try_from(*n).ok()?,
            _ => self.arch_u32("vocab_size")?,
        };
        Some(ModelShape {
            layers,
            embedding,
            heads,
            kv_heads,
            key_length: self.arch_u32("attention.key_length").unwrap_or(head),
            value_length: self.arch_u32("attention.value_length").unwrap_or(head),
            vocab,
            context_length: self.arch_u32("context_length").unwrap_or(ASSUMED_CONTEXT_LENGTH),
        })
    }

    /// `{architecture}.{key}` as a u32 (GGUF stores these under the architecture's name).
    fn arch_u32(&self, key: &str) -> Option<u32> {
        let arch = self.architecture()?;
        self.int(&format!("{arch}.{key}")).and_then(|v| u32::try_from(v).ok())
    }
}

/// llama.cpp's name for a `general.file_type` (enum llama_ftype).
pub fn file_type_name(file_type: i64) -> Option<&'static str> {
    Some(match file_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        19 => "IQ2_XXS",
        20 => "IQ2_XS",
        21 => "Q2_K_S",
        22 => "IQ3_XS",
        23 => "IQ3_XXS",
        24 => "IQ1_S",
        25 => "IQ4_NL",
        26 => "IQ3_S",
        27 => "IQ3_M",
        28 => "IQ2_S",
        29 => "IQ2_M",
        30 => "IQ4_XS",
        31 => "IQ1_M",
        32 => "BF16",
        36 => "TQ1_0",
        37 => "TQ2_0",
        38 => "MXFP4_MOE",
        _ => return None,
    })
}
