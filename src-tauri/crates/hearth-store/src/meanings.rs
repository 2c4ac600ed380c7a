//! Passages' vectors by an embedding model (`passage_meanings`), and the passages closest in
//! meaning to a question: every vector of the documents asked about compared with the
//! question's (a dot product of unit vectors), as a chat's documents hold thousands of passages
//! at most — 10,000 of 384 dimensions are 15 MB read and ~4 M multiplications.

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
        let rows: Vec<(String, i64, Vec<u8>)> = sqlx::query_as(
            "SELECT document, ordinal, vector FROM passage_meanings WHERE model = ? AND document IN (SELECT value FROM json_each(?))",
        )
        .bind(&meaning.model)
        .bind(serde_json::to_string(hashes).expect("hashes serialize"))
        .fetch_all(self.pool())
        .await?;
        let mut scored: Vec<(f32, String, u32)> =
            rows.into_iter().map(|(hash, ordinal, blob)| (closeness(&from_blob(&blob), &meaning.vector), hash, ordinal as u32)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        Ok(scored.into_iter().take(limit).map(|(_, hash, ordinal)| (hash, ordinal)).collect())
    }

    /// The passage `ordinal` of the document `hash`, if it is indexed.
    pub(crate) async fn passage(&self, hash: &str, ordinal: u32) -> Result<Option<Passage>, StoreError> {
        let row: Option<PassageRow> =
            sqlx::query_as("SELECT document AS hash, ordinal, text FROM passages WHERE passages MATCH ? AND ordinal = ?")
                .bind(in_documents(&[hash]))
                .bind(ordinal as i64)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(Passage::from))
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
