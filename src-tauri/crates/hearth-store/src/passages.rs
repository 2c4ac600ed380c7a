//! Attached documents cut into passages and indexed (FTS5, BM25 ranking) for retrieval: the
//! passages of a document too long to go whole that best answer a question.

use hearth_core::{Meaning, Passage, fuse_rankings, passage_ranges};

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
pub(crate) fn in_documents(hashes: &[&str]) -> String {
    let quoted: Vec<String> = hashes.iter().map(|h| format!("\"{}\"", h.replace('"', ""))).collect();
    format!("document : ({})", quoted.join(" OR "))
}

from_row! {
    pub(crate) struct PassageRow {
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

/// Candidates each ranking offers when words and meaning are fused.
const FUSED_CANDIDATES: usize = 50;

/// Told the share of a document's text indexed so far (0 to 1), after each batch.
pub type Indexed<'a> = &'a (dyn Fn(f64) + Send + Sync);

/// Passages written per transaction: the history's other writes (a streaming reply's flush) wait
/// for one batch at most, not a whole document.
const PASSAGES_PER_WRITE: usize = 256;

impl Store {
    /// Cuts the stored document `hash` (text `text`) into passages and indexes them, a batch per
    /// transaction, telling `indexed` the share of the text indexed after each; marks it indexed at
    /// the end. A cut left unfinished (a crash) is begun again.
    pub(crate) async fn index_document(&self, hash: &str, text: &str, indexed: Indexed<'_>) -> Result<(), StoreError> {
        let _one_at_a_time = self.indexing.lock().await;
        let mut tx = self.write_transaction().await?;
        let done: Option<bool> =
            sqlx::query_scalar("SELECT indexed FROM attachments WHERE hash = ?").bind(hash).fetch_optional(&mut *tx).await?;
        if done != Some(false) {
            return Ok(());
        }
        sqlx::query("DELETE FROM passages WHERE passages MATCH ?").bind(in_documents(&[hash])).execute(&mut *tx).await?;
        for (ordinal, range) in passage_ranges(text).into_iter().enumerate() {
            if ordinal > 0 && ordinal % PASSAGES_PER_WRITE == 0 {
                tx.commit().await?;
                indexed(range.start as f64 / text.len() as f64);
                tx = self.write_transaction().await?;
            }
            sqlx::query("INSERT INTO passages (text, document, ordinal) VALUES (?, ?, ?)")
                .bind(&text[range])
                .bind(hash)
                .bind(ordinal as i64)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("UPDATE attachments SET indexed = 1 WHERE hash = ?").bind(hash).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Indexes the documents among `hashes` stored but not indexed yet (stored before passages
    /// were, imported, or cut off by a crash).
    pub(crate) async fn index_missing(&self, hashes: &str) -> Result<(), StoreError> {
        let missing: Vec<(String, String)> = sqlx::query_as(
            "SELECT hash, text FROM attachments WHERE indexed = 0 AND kind = 'document' AND hash IN (SELECT value FROM json_each(?))",
        )
        .bind(hashes)
        .fetch_all(self.pool())
        .await?;
        for (hash, text) in missing {
            self.index_document(&hash, &text, &|_| {}).await?;
        }
        Ok(())
    }

    /// The best `limit` passages for `query` among the stored documents `hashes`, best first:
    /// by BM25, fused with their closeness to `meaning` when given (see `meanings`); when fewer
    /// match and `fill`, the documents' first passages (in the order of `hashes`) fill the rest.
    pub async fn retrieve_passages(
        &self,
        hashes: &[&str],
        query: &str,
        meaning: Option<&Meaning>,
        limit: usize,
        fill: bool,
    ) -> Result<Vec<Passage>, StoreError> {
        if hashes.is_empty() {
            return Ok(Vec::new());
        }
        let listed = serde_json::to_string(hashes).expect("hashes serialize");
        self.index_missing(&listed).await?;
        let documents = in_documents(hashes);
        // Each ranking offers more candidates than are kept when they are fused.
        let candidates = if meaning.is_some() { limit.max(FUSED_CANDIDATES) } else { limit };
        let by_words: Vec<Passage> = match retrieval_query(query) {
            // The documents' filter is the index's: only their passages are ranked.
            Some(matching) => sqlx::query_as::<_, PassageRow>(
                "SELECT document AS hash, ordinal, text FROM passages WHERE passages MATCH ?
                 ORDER BY bm25(passages, 1.0, 0.0) LIMIT ?",
            )
            .bind(format!("text : ({matching}) AND {documents}"))
            .bind(candidates as i64)
            .fetch_all(self.pool())
            .await?
            .into_iter()
            .map(Passage::from)
            .collect(),
            None => Vec::new(),
        };
        let mut found = match meaning {
            Some(meaning) => {
                let place = |p: &Passage| (p.hash.clone(), p.ordinal);
                let by_meaning = self.closest_passages(hashes, meaning, candidates).await?;
                let words: Vec<(String, u32)> = by_words.iter().map(place).collect();
                let fused: Vec<(String, u32)> = fuse_rankings(&words, &by_meaning).into_iter().take(limit).collect();
                // Those found by meaning alone are read in one go: each read alone scans the document.
                let missing: Vec<&(String, u32)> = fused.iter().filter(|place| !words.contains(place)).collect();
                let read = self.passages_at(&missing).await?;
                fused
                    .iter()
                    .filter_map(|(hash, ordinal)| by_words.iter().chain(&read).find(|p| &p.hash == hash && p.ordinal == *ordinal).cloned())
                    .collect()
            }
            None => by_words,
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

    /// A long document tells how much of it is indexed after each batch, in order; a short one
    /// (one batch) tells nothing; a document stored before is not indexed again.
    #[tokio::test]
    async fn a_long_document_tells_how_much_is_indexed() {
        use hearth_core::{AttachmentKind, passage_ranges};
        use std::sync::Mutex;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("hearth.db")).await.unwrap();
        let told = |text: &str, hash: &str| {
            let store = store.clone();
            let (text, hash) = (text.to_owned(), hash.to_owned());
            async move {
                let seen = Mutex::new(Vec::new());
                let content = crate::StoredContent { kind: AttachmentKind::Document, data: text.clone().into_bytes(), text };
                store.keep_attachment_telling(&hash, &content, &|share| seen.lock().unwrap().push(share)).await.unwrap();
                seen.into_inner().unwrap()
            }
        };
        let long: String = (0..7000).map(|i| format!("Paragraph {i} about the harbour and its boats.\n\n")).collect();
        let shares = told(&long, &"ab".repeat(32)).await;
        assert_eq!(shares.len(), (passage_ranges(&long).len() - 1) / PASSAGES_PER_WRITE, "{shares:?}");
        assert!(shares.windows(2).all(|w| w[0] < w[1]) && shares.iter().all(|s| (0.0..1.0).contains(s)), "{shares:?}");
        assert_eq!(told("A short note.", &"cd".repeat(32)).await, Vec::<f64>::new());
        assert_eq!(told(&long, &"ab".repeat(32)).await, Vec::<f64>::new(), "stored before: not indexed again");
    }

    /// A cut cut off by a crash (some passages written, the document not marked indexed) is
    /// begun again when the document is next retrieved from: every passage once.
    #[tokio::test]
    async fn an_unfinished_cut_is_begun_again() {
        use hearth_core::AttachmentKind;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("hearth.db")).await.unwrap();
        let text: String = (0..7000).map(|i| format!("Paragraph {i} about the harbour and its boats.\n\n")).collect();
        let hash = "ab".repeat(32);
        let content = crate::StoredContent { kind: AttachmentKind::Document, data: text.clone().into_bytes(), text: text.clone() };
        store.keep_attachment(&hash, &content).await.unwrap();
        let count = async || -> i64 {
            sqlx::query_scalar("SELECT count(*) FROM passages WHERE passages MATCH ?")
                .bind(in_documents(&[&hash]))
                .fetch_one(store.pool())
                .await
                .unwrap()
        };
        let cut = passage_ranges(&text).len() as i64;
        assert!(cut > PASSAGES_PER_WRITE as i64 && count().await == cut, "{cut} passages in more than one batch");
        sqlx::query("UPDATE attachments SET indexed = 0").execute(store.pool()).await.unwrap();
        sqlx::query("DELETE FROM passages WHERE ordinal >= 10").execute(store.pool()).await.unwrap();
        let found = store.retrieve_passages(&[&hash], "Paragraph 6999", None, 5, true).await.unwrap();
        assert!(found[0].text.contains("Paragraph 6999"), "{found:?}");
        assert_eq!(count().await, cut);
    }
}
