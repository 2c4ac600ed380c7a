//! Attached documents cut into passages and indexed (FTS5, BM25 ranking) for retrieval: the
//! passages of a document too long to go whole that best answer a question.

use hearth_core::{Passage, passage_ranges};
use sqlx::{Sqlite, Transaction};

use crate::{Store, StoreError};

/// Words that say nothing about which passage answers a question (BM25 would weigh them low,
/// but OR-ing them makes every passage a candidate).
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "can", "did", "do", "does", "for", "from", "has", "have", "how", "in", "is",
    "it", "its", "of", "on", "or", "that", "the", "their", "there", "this", "to", "was", "were", "what", "when", "where", "which", "who",
    "why", "will", "with", "you", "your",
];

/// The FTS5 query for a question: each word that says something, quoted, any of them matching
/// (BM25 ranks passages matching more and rarer words first). `None` when no word is left.
pub fn retrieval_query(question: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for word in question.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase) {
        if word.chars().count() > 1 && !STOP_WORDS.contains(&word.as_str()) && !words.contains(&word) {
            words.push(word);
        }
    }
    (!words.is_empty()).then(|| words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" OR "))
}

/// The FTS5 filter for passages of the documents `hashes` (hex, so quoted as they are).
fn in_documents(hashes: &[&str]) -> String {
    let quoted: Vec<String> = hashes.iter().map(|h| format!("\"{}\"", h.replace('"', ""))).collect();
    format!("document : ({})", quoted.join(" OR "))
}

from_row! {
    struct PassageRow {
        hash: String,
        ordinal: i64,
        text: String,
    }
}

impl From<PassageRow> for Passage {
    fn from(r: PassageRow) -> Self {
        Passage { hash: r.hash, name: String::new(), ordinal: r.ordinal as u32, text: r.text }
    }
}

/// Cuts the document `hash` (text `text`) into passages and indexes them, in `tx`.
pub(crate) async fn index_document(tx: &mut Transaction<'_, Sqlite>, hash: &str, text: &str) -> Result<(), StoreError> {
    for (ordinal, range) in passage_ranges(text).into_iter().enumerate() {
        sqlx::query("INSERT INTO passages (text, document, ordinal) VALUES (?, ?, ?)")
            .bind(&text[range])
            .bind(hash)
            .bind(ordinal as i64)
            .execute(&mut **tx)
            .await?;
    }
    sqlx::query("UPDATE attachments SET indexed = 1 WHERE hash = ?").bind(hash).execute(&mut **tx).await?;
    Ok(())
}

impl Store {
    /// Indexes the documents among `hashes` stored but not indexed yet (stored before passages
    /// were, or imported).
    async fn index_missing(&self, hashes: &str) -> Result<(), StoreError> {
        let missing: Vec<(String, String)> = sqlx::query_as(
            "SELECT hash, text FROM attachments WHERE indexed = 0 AND kind = 'document' AND hash IN (SELECT value FROM json_each(?))",
        )
        .bind(hashes)
        .fetch_all(self.pool())
        .await?;
        for (hash, text) in missing {
            let mut tx = self.write_transaction().await?;
            let indexed: bool =
                sqlx::query_scalar("SELECT indexed FROM attachments WHERE hash = ?").bind(&hash).fetch_one(&mut *tx).await?;
            if !indexed {
                index_document(&mut tx, &hash, &text).await?;
            }
            tx.commit().await?;
        }
        Ok(())
    }

    /// The best `limit` passages for `query` among the stored documents `hashes`, best first;
    /// when fewer match and `fill`, the documents' first passages (in the order of `hashes`) fill
    /// the rest.
    pub async fn retrieve_passages(&self, hashes: &[&str], query: &str, limit: usize, fill: bool) -> Result<Vec<Passage>, StoreError> {
        if hashes.is_empty() {
            return Ok(Vec::new());
        }
        let listed = serde_json::to_string(hashes).expect("hashes serialize");
        self.index_missing(&listed).await?;
        let documents = in_documents(hashes);
        let mut found: Vec<Passage> = match retrieval_query(query) {
            // The documents' filter is the index's: only their passages are ranked.
            Some(matching) => sqlx::query_as::<_, PassageRow>(
                "SELECT document AS hash, ordinal, text FROM passages WHERE passages MATCH ?
                 ORDER BY bm25(passages, 1.0, 0.0) LIMIT ?",
            )
            .bind(format!("text : ({matching}) AND {documents}"))
            .bind(limit as i64)
            .fetch_all(self.pool())
            .await?
            .into_iter()
            .map(Passage::from)
            .collect(),
            None => Vec::new(),
        };
        if fill && found.len() < limit {
            let openings: Vec<PassageRow> = sqlx::query_as(
                "SELECT document AS hash, ordinal, text FROM passages JOIN json_each(?) AS wanted ON document = wanted.value
                 WHERE passages MATCH ? AND ordinal < ? ORDER BY wanted.key, ordinal",
            )
            .bind(&listed)
            .bind(&documents)
            .bind(limit as i64)
            .fetch_all(self.pool())
            .await?;
            for passage in openings.into_iter().map(Passage::from) {
                if found.len() < limit && !found.iter().any(|f| f.hash == passage.hash && f.ordinal == passage.ordinal) {
                    found.push(passage);
                }
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_become_any_of_their_telling_words() {
        let cases = [
            ("What is the boiling point of the kettle?", Some("\"boiling\" OR \"point\" OR \"kettle\"")),
            ("Kettle kettle KETTLE", Some("\"kettle\"")),
            ("\"quoted\" AND (ops) OR x*", Some("\"quoted\" OR \"ops\"")),
            ("what is it?", None),
            ("", None),
            ("Überprüfung 2026", Some("\"überprüfung\" OR \"2026\"")),
        ];
        for (question, expected) in cases {
            assert_eq!(retrieval_query(question).as_deref(), expected, "{question}");
        }
    }
}
