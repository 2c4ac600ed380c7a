//! Passages' vectors by an embedding model (`passage_meanings`), and the passages closest in
//! meaning to a question: every vector of the documents asked about compared with the
//! question's (a dot product of unit vectors), as a chat's documents hold thousands of passages
//! at most — 10,000 of 384 dimensions are ~4 M multiplications. Reading them (15 MB) costs more
//! than comparing, so the vectors read lately are kept in memory ([`KeptMeanings`]): a chat's
//! next questions about the same documents read none again.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use hearth_core::{Meaning, Passage, PassageMeaning, closeness};

use crate::passages::{PassageRow, in_documents};
use crate::{Store, StoreError};

/// A vector as stored: its f32s, little-endian.
fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// One document's vectors by one model: (ordinal, vector) each.
type DocumentMeanings = Arc<Vec<(u32, Vec<f32>)>>;

/// The numbers kept in memory at most (64 MB of f32s: ~40,000 passages of 384 dimensions); the
/// documents read longest ago go first.
const KEPT_FLOATS: usize = 16 << 20;

/// The vectors read lately, by (model, document), oldest first.
#[derive(Default)]
pub(crate) struct KeptMeanings(Mutex<VecDeque<((String, String), DocumentMeanings)>>);

impl KeptMeanings {
    fn get(&self, model: &str, hash: &str) -> Option<DocumentMeanings> {
        let mut kept = self.0.lock().expect("kept meanings poisoned");
        let at = kept.iter().position(|((m, h), _)| m == model && h == hash)?;
        let entry = kept.remove(at)?;
        let vectors = entry.1.clone();
        kept.push_back(entry);
        Some(vectors)
    }

    fn keep(&self, model: &str, hash: &str, vectors: DocumentMeanings) {
        let mut kept = self.0.lock().expect("kept meanings poisoned");
        kept.retain(|((m, h), _)| !(m == model && h == hash));
        kept.push_back(((model.to_owned(), hash.to_owned()), vectors));
        let floats = |kept: &VecDeque<(_, DocumentMeanings)>| kept.iter().flat_map(|(_, v)| v.iter()).map(|(_, v)| v.len()).sum::<usize>();
        while kept.len() > 1 && floats(&kept) > KEPT_FLOATS {
            kept.pop_front();
        }
    }

    /// A document's vectors changed (or it is gone): read them again when next asked.
    pub(crate) fn forget(&self, hash: Option<&str>) {
        let mut kept = self.0.lock().expect("kept meanings poisoned");
        kept.retain(|((_, h), _)| hash.is_some_and(|hash| h != hash));
    }
}

impl Store {
    /// Up to `limit` passages of the documents `hashes` without a vector of `model`, in their
    /// order, and how many there are in all. Documents not cut into passages yet are cut first.
    pub async fn passages_without_meaning(&self, hashes: &[&str], model: &str, limit: usize) -> Result<(Vec<Passage>, u64), StoreError> {
        if hashes.is_empty() {
            return Ok((Vec::new(), 0));
        }
        self.index_missing(&serde_json::to_string(hashes).expect("hashes serialize")).await?;
        let documents = in_documents(hashes);
        const WITHOUT: &str = "FROM passages WHERE passages MATCH ? AND NOT EXISTS (SELECT 1 FROM passage_meanings AS m
             WHERE m.document = passages.document AND m.model = ? AND m.ordinal = passages.ordinal)";
        let left: i64 =
            sqlx::query_scalar(&format!("SELECT count(*) {WITHOUT}")).bind(&documents).bind(model).fetch_one(self.pool()).await?;
        let passages: Vec<PassageRow> =
            sqlx::query_as(&format!("SELECT document AS hash, ordinal, text {WITHOUT} ORDER BY document, ordinal LIMIT ?"))
                .bind(&documents)
                .bind(model)
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?;
        Ok((passages.into_iter().map(Passage::from).collect(), left as u64))
    }

    /// Keeps passages' vectors by `model` (one given again replaces the one kept).
    pub async fn keep_meanings(&self, model: &str, meanings: &[PassageMeaning]) -> Result<(), StoreError> {
        let mut tx = self.write_transaction().await?;
        for meaning in meanings {
            sqlx::query("INSERT OR REPLACE INTO passage_meanings (document, ordinal, model, vector) VALUES (?, ?, ?, ?)")
                .bind(&meaning.hash)
                .bind(meaning.ordinal as i64)
                .bind(model)
                .bind(to_blob(&meaning.vector))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        for meaning in meanings {
            self.meanings.forget(Some(&meaning.hash));
        }
        Ok(())
    }

    /// The `limit` passages of the documents `hashes` closest to `meaning` (of its model), best
    /// first, as (document, ordinal).
    pub(crate) async fn closest_passages(
        &self,
        hashes: &[&str],
        meaning: &Meaning,
        limit: usize,
    ) -> Result<Vec<(String, u32)>, StoreError> {
        let mut scored: Vec<(f32, &str, u32)> = Vec::new();
        for (i, &hash) in hashes.iter().enumerate() {
            if hashes[..i].contains(&hash) {
                continue;
            }
            let vectors = self.document_meanings(&meaning.model, hash).await?;
            scored.extend(vectors.iter().map(|(ordinal, vector)| (closeness(vector, &meaning.vector), hash, *ordinal)));
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        Ok(scored.into_iter().take(limit).map(|(_, hash, ordinal)| (hash.to_owned(), ordinal)).collect())
    }

    /// Document `hash`'s vectors by `model`: kept in memory since last read, or read now.
    async fn document_meanings(&self, model: &str, hash: &str) -> Result<DocumentMeanings, StoreError> {
        if let Some(vectors) = self.meanings.get(model, hash) {
            return Ok(vectors);
        }
        let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as("SELECT ordinal, vector FROM passage_meanings WHERE model = ? AND document = ?")
            .bind(model)
            .bind(hash)
            .fetch_all(self.pool())
            .await?;
        let vectors: DocumentMeanings = Arc::new(rows.into_iter().map(|(ordinal, blob)| (ordinal as u32, from_blob(&blob))).collect());
        self.meanings.keep(model, hash, vectors.clone());
        Ok(vectors)
    }

    /// The passages at `places` (document, ordinal) that are indexed, in no order: one scan of
    /// their documents' passages.
    pub(crate) async fn passages_at(&self, places: &[&(String, u32)]) -> Result<Vec<Passage>, StoreError> {
        if places.is_empty() {
            return Ok(Vec::new());
        }
        let mut hashes: Vec<&str> = places.iter().map(|(hash, _)| hash.as_str()).collect();
        hashes.sort_unstable();
        hashes.dedup();
        let ordinals: Vec<u32> = places.iter().map(|(_, ordinal)| *ordinal).collect();
        let rows: Vec<PassageRow> = sqlx::query_as(
            "SELECT document AS hash, ordinal, text FROM passages WHERE passages MATCH ? AND ordinal IN (SELECT value FROM json_each(?))",
        )
        .bind(in_documents(&hashes))
        .bind(serde_json::to_string(&ordinals).expect("ordinals serialize"))
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(Passage::from).filter(|p| places.iter().any(|(h, o)| *h == p.hash && *o == p.ordinal)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_kept_exactly() {
        let vector = [0.25, -1.5, f32::MIN_POSITIVE, 3.0e-8];
        assert_eq!(from_blob(&to_blob(&vector)), vector);
    }
}
