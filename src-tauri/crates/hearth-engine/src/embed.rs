//! Embedding models (BERT-like encoders: all-MiniLM, bge, nomic-embed…): a text's meaning as a
//! vector, for retrieval by meaning beside retrieval by words. A model is kept after its first
//! use (one at a time); each call reads its texts in batches of whole sequences (an encoder sees
//! a sequence at once) and gives each its pooled vector at unit length, so two texts' cosine is
//! their vectors' dot product.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;

use crate::EngineError;
use crate::devices::llama_backend;
use crate::load::{Threads, physical_cores};

/// The most texts read in one batch (llama.cpp's sequences).
const SEQUENCES_PER_BATCH: usize = 16;
/// The most tokens read in one batch; a longer text is cut to it (and to the model's training
/// context).
const TOKENS_PER_BATCH: usize = 2048;

/// The embedding model kept, and its file.
pub struct Embedder {
    kept: Option<(PathBuf, LlamaModel)>,
}

/// Why texts could not be embedded.
fn refusal(path: &Path, reason: impl std::fmt::Display) -> EngineError {
    EngineError::Embed { path: path.display().to_string(), reason: reason.to_string() }
}

impl Embedder {
    pub fn new() -> Embedder {
        Embedder { kept: None }
    }

    /// The vectors of `texts` by the embedding model at `path`, in order, each of unit length.
    pub fn embed(&mut self, path: &Path, texts: &[String]) -> Result<Vec<Vec<f32>>, EngineError> {
        let model = self.model(path)?;
        let limit = (model.n_ctx_train() as usize).clamp(8, TOKENS_PER_BATCH);
        let mut tokenized = Vec::with_capacity(texts.len());
        for text in texts {
            // With the model's own markers ([CLS] … [SEP]); a text too long keeps its end marker.
            let mut tokens = model.vocab().tokenize(text.as_bytes(), true, false);
            if tokens.len() > limit {
                let end = tokens[tokens.len() - 1];
                tokens.truncate(limit - 1);
                tokens.push(end);
            }
            tokenized.push(tokens);
        }
        let threads = Threads::choose(None, physical_cores()).batch as i32;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(TOKENS_PER_BATCH as u32))
            .with_n_batch(TOKENS_PER_BATCH as u32)
            .with_n_ubatch(TOKENS_PER_BATCH as u32)
            .with_n_seq_max(SEQUENCES_PER_BATCH as u32)
            .with_n_threads(threads)
            .with_n_threads_batch(threads)
            .with_embeddings(true);
        let backend = llama_backend().map_err(|e| refusal(path, e))?;
        let mut context = model.new_context(backend, params).map_err(|e| refusal(path, e))?;
        let mut vectors = Vec::with_capacity(texts.len());
        let mut batch = LlamaBatch::new(TOKENS_PER_BATCH, SEQUENCES_PER_BATCH as i32);
        let mut start = 0;
        while start < tokenized.len() {
            batch.clear();
            let mut end = start;
            let mut used = 0;
            while end < tokenized.len() && end - start < SEQUENCES_PER_BATCH && used + tokenized[end].len() <= TOKENS_PER_BATCH {
                let seq = (end - start) as i32;
                for (pos, token) in tokenized[end].iter().enumerate() {
                    batch.add(*token, pos as i32, &[seq], true).map_err(|e| refusal(path, e))?;
                }
                used += tokenized[end].len();
                end += 1;
            }
            context.clear_kv_cache();
            context.decode(&mut batch).map_err(|e| refusal(path, e))?;
            for seq in 0..(end - start) as i32 {
                let pooled = context.embeddings_seq_ith(seq).map_err(|e| refusal(path, e))?;
                vectors.push(unit_length(pooled));
            }
            start = end;
        }
        Ok(vectors)
    }

    /// The model at `path`, read once; an encoder that pools (an embedding model) or a refusal.
    fn model(&mut self, path: &Path) -> Result<&LlamaModel, EngineError> {
        if self.kept.as_ref().is_none_or(|(kept, _)| kept != path) {
            self.kept = None;
            let file = hearth_gguf::validate(path)?;
            if !file.is_embedding_model() {
                return Err(refusal(path, "it is not an embedding model (it does not pool its tokens into one vector)"));
            }
            let backend = llama_backend().map_err(|e| refusal(path, e))?;
            crate::llama_log::clear();
            let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
                .map_err(|e| refusal(path, crate::llama_log::last_error().unwrap_or_else(|| e.to_string())))?;
            self.kept = Some((path.to_path_buf(), model));
        }
        Ok(&self.kept.as_ref().expect("kept above").1)
    }
}

impl Default for Embedder {
    fn default() -> Self {
        Embedder::new()
    }
}

/// `vector` scaled to unit length (a zero vector stays zero).
fn unit_length(vector: &[f32]) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    match norm > 0.0 {
        true => vector.iter().map(|x| x / norm).collect(),
        false => vector.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_out_at_unit_length() {
        assert_eq!(unit_length(&[3.0, 4.0]), [0.6, 0.8]);
        assert_eq!(unit_length(&[0.0, 0.0]), [0.0, 0.0]);
    }
}
