//! Retrieval by meaning beside retrieval by words: with an embedding model chosen, each passage
//! of an attached document and each question get a vector from it, and passages are ranked by
//! both their words (BM25) and their vector's closeness to the question's, the two rankings
//! fused by reciprocal rank (the store's `passages`). A passage whose vector is missing
//! (attached before a model was chosen, or under another) is embedded before it is ranked.

use std::future::Future;
use std::pin::Pin;

use crate::HistoryStore;

/// A question's meaning: its vector (unit length) by the embedding model `model`; only vectors
/// of that model are compared with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Meaning {
    pub model: String,
    pub vector: Vec<f32>,
}

/// A passage's vector by an embedding model.
#[derive(Debug, Clone, PartialEq)]
pub struct PassageMeaning {
    pub hash: String,
    pub ordinal: u32,
    pub vector: Vec<f32>,
}

/// Texts' vectors and the model that gave them.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedded {
    /// The model's identity (its content, not its name).
    pub model: String,
    pub vectors: Vec<Vec<f32>>,
}

/// Why texts could not be embedded, in the words the user reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct EmbedError(pub String);

/// The embedding model the user chose, if any, and what it makes of texts.
pub trait Embedder: Send + Sync + 'static {
    /// The chosen model's identity; `None` when none is chosen (passages are then ranked by their
    /// words alone).
    fn model(&self) -> Option<String>;

    /// `texts`' vectors, in order, by the chosen model.
    fn embed(&self, texts: Vec<String>) -> Pin<Box<dyn Future<Output = Result<Embedded, EmbedError>> + Send + '_>>;
}

/// Passages embedded per request: the engine reads them in batches of its own; this bounds what
/// one frame carries and how often progress is told.
pub const PASSAGES_PER_EMBED: usize = 32;

/// Why passages could not be given their vectors.
#[derive(Debug, thiserror::Error)]
pub enum MeaningError {
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("{0}")]
    Store(Box<dyn std::error::Error + Send + Sync>),
}

/// Gives every passage of the documents `hashes` its vector by the chosen model (none chosen:
/// nothing to do), telling `told` the share of those passages done after each request. Returns
/// the model the vectors are of.
pub async fn embed_passages<S: HistoryStore>(
    store: &S,
    embedder: &dyn Embedder,
    hashes: &[&str],
    told: &(dyn Fn(f64) + Send + Sync),
) -> Result<Option<String>, MeaningError> {
    let Some(model) = embedder.model() else { return Ok(None) };
    let store_error = |e: S::Error| MeaningError::Store(Box::new(e));
    let mut total = None;
    loop {
        let (missing, left) = store.passages_without_meaning(hashes, &model, PASSAGES_PER_EMBED).await.map_err(store_error)?;
        let total = *total.get_or_insert(left);
        if missing.is_empty() {
            return Ok(Some(model));
        }
        let embedded = embedder.embed(missing.iter().map(|p| p.text.clone()).collect()).await?;
        if embedded.model != model || embedded.vectors.len() != missing.len() {
            // The user chose another model meanwhile: this one's vectors are not kept.
            return Err(EmbedError("the embedding model changed while the document was read; ask again".into()).into());
        }
        let meanings: Vec<PassageMeaning> = missing
            .into_iter()
            .zip(embedded.vectors)
            .map(|(passage, vector)| PassageMeaning { hash: passage.hash, ordinal: passage.ordinal, vector })
            .collect();
        store.keep_meanings(&model, &meanings).await.map_err(store_error)?;
        let done = total.saturating_sub(left.saturating_sub(meanings.len() as u64));
        told(done as f64 / total.max(1) as f64);
    }
}

/// The ranks (best first) of two rankings fused by reciprocal rank: each item scores
/// `1 / (K + rank)` in each ranking it is in, summed. K = 60 as in Cormack et al. (2009): a
/// passage near the top of both beats one at the top of one alone.
pub fn fuse_rankings<T: PartialEq + Clone>(words: &[T], meaning: &[T]) -> Vec<T> {
    const K: f64 = 60.0;
    let mut scored: Vec<(T, f64)> = Vec::new();
    for ranking in [words, meaning] {
        for (rank, item) in ranking.iter().enumerate() {
            let score = 1.0 / (K + rank as f64 + 1.0);
            match scored.iter_mut().find(|(seen, _)| seen == item) {
                Some((_, total)) => *total += score,
                None => scored.push((item.clone(), score)),
            }
        }
    }
    // Stable: equal scores keep the words' ranking first.
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.into_iter().map(|(item, _)| item).collect()
}

/// The cosine of two unit vectors (their dot product); 0 for vectors of different lengths.
pub fn closeness(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rankings_fuse_by_reciprocal_rank() {
        let cases: [(&[&str], &[&str], &[&str]); 4] = [
            // Second in both beats first in one.
            (&["a", "b", "c"], &["d", "b", "e"], &["b", "a", "d", "c", "e"]),
            (&["a", "b"], &[], &["a", "b"]),
            (&[], &["x", "y"], &["x", "y"]),
            // A tie keeps the words' order first.
            (&["a", "b"], &["b", "a"], &["a", "b"]),
        ];
        for (words, meaning, fused) in cases {
            assert_eq!(fuse_rankings(words, meaning), fused, "{words:?} + {meaning:?}");
        }
    }

    #[test]
    fn closeness_is_the_dot_product_of_unit_vectors() {
        assert_eq!(closeness(&[1.0, 0.0], &[1.0, 0.0]), 1.0);
        assert_eq!(closeness(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert!((closeness(&[0.6, 0.8], &[0.8, 0.6]) - 0.96).abs() < 1e-6);
        assert_eq!(closeness(&[1.0], &[1.0, 0.0]), 0.0);
    }
}
