//! `hearth-cli bench`, section `retrieve`: a long document cut into passages and indexed, then
//! questions retrieved against it, in a real SQLite file. Measured: how fast a document is
//! indexed as it is attached (`index_mb_per_s`), and the 95th percentile of one question's
//! retrieval over an index of more than 10,000 passages (`retrieve_p95_ms`; goal ≤ 50 ms), by
//! words alone and by words and meaning (`retrieve_meaning_p95_ms`: every passage with a vector
//! of 384 dimensions, as all-MiniLM gives, fused with BM25). The vectors are made here, not by a
//! model: the store's share is what is timed (a question's own vector, one short text through
//! the engine's embedding model, is not counted here).

use std::time::Instant;

use serde::Serialize;

use hearth_core::{AttachmentKind, Meaning, PassageMeaning};
use hearth_store::{Store, StoredContent, hex_sha256};

/// Passages the document is cut into, about.
const PASSAGES: usize = 10_500;
const QUESTIONS: usize = 200;
/// Words the document is written from: common and rare ones, so questions match many passages
/// or few as real ones do.
const COMMON: &[&str] = &[
    "the",
    "member",
    "harbour",
    "committee",
    "fee",
    "key",
    "booking",
    "boat",
    "room",
    "week",
    "season",
    "rule",
    "water",
    "door",
    "shed",
    "winter",
    "summer",
    "meeting",
    "guest",
    "tool",
];

#[derive(Serialize)]
pub struct RetrieveReport {
    /// The document's text indexed per second as it is attached, in MB (10^6 bytes).
    pub index_mb_per_s: f64,
    /// One question's retrieval (five passages), 95th percentile, in ms.
    pub retrieve_p95_ms: f64,
    pub retrieve_median_ms: f64,
    /// As `retrieve_p95_ms`, with the question's meaning ranked too and fused.
    pub retrieve_meaning_p95_ms: f64,
    pub retrieve_meaning_median_ms: f64,
    /// Passages in the index.
    pub retrieve_passages: u32,
}

/// Dimensions of the vectors, as all-MiniLM-L6-v2's.
const DIMENSIONS: usize = 384;

/// A small deterministic generator (xorshift), so every run indexes the same document.
struct Words(u64);

impl Words {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A common word three times in four, else one of 50,000 rare ones.
    fn word(&mut self) -> String {
        let n = self.next();
        match n % 4 {
            0 => format!("w{}", (n >> 8) % 50_000),
            _ => COMMON[(n >> 8) as usize % COMMON.len()].to_string(),
        }
    }

    /// A vector of unit length.
    fn vector(&mut self) -> Vec<f32> {
        let v: Vec<f32> = (0..DIMENSIONS).map(|_| (self.next() % 2001) as f32 / 1000.0 - 1.0).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    fn paragraph(&mut self) -> String {
        let words: Vec<String> = (0..180).map(|_| self.word()).collect();
        words.join(" ") + ".\n\n"
    }
}

pub async fn run() -> Result<RetrieveReport, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    let store = Store::open(&dir.path().join("bench.db")).await.map_err(|e| format!("the store did not open: {e}"))?;
    let mut words = Words(0x9E37_79B9_7F4A_7C15);
    let text: String = (0..PASSAGES).map(|_| words.paragraph()).collect();
    let hash = hex_sha256(text.as_bytes());
    let content = StoredContent { kind: AttachmentKind::Document, data: text.clone().into_bytes(), text };
    let started = Instant::now();
    store.keep_attachment(&hash, &content).await.map_err(|e| format!("indexing failed: {e}"))?;
    let index_mb_per_s = content.text.len() as f64 / 1e6 / started.elapsed().as_secs_f64();
    let passages = hearth_core::passage_ranges(&content.text).len();

    let by_words = time_questions(&store, &hash, &mut words, false).await?;
    let meanings: Vec<PassageMeaning> =
        (0..passages).map(|ordinal| PassageMeaning { hash: hash.clone(), ordinal: ordinal as u32, vector: words.vector() }).collect();
    store.keep_meanings(MODEL, &meanings).await.map_err(|e| format!("the vectors were not kept: {e}"))?;
    let by_meaning = time_questions(&store, &hash, &mut words, true).await?;
    let round = |ms: f64| (ms * 100.0).round() / 100.0;
    let at = |times: &[f64], share: usize| round(times[times.len() * share / 100]);
    Ok(RetrieveReport {
        index_mb_per_s: (index_mb_per_s * 100.0).round() / 100.0,
        retrieve_p95_ms: at(&by_words, 95),
        retrieve_median_ms: at(&by_words, 50),
        retrieve_meaning_p95_ms: at(&by_meaning, 95),
        retrieve_meaning_median_ms: at(&by_meaning, 50),
        retrieve_passages: passages as u32,
    })
}

/// The vectors' model, as the store keys them.
const MODEL: &str = "bench";

/// Each of [`QUESTIONS`] questions' retrieval time (ms), sorted; with a meaning when `meaning`.
async fn time_questions(store: &Store, hash: &str, words: &mut Words, meaning: bool) -> Result<Vec<f64>, String> {
    let mut times = Vec::with_capacity(QUESTIONS);
    for _ in 0..QUESTIONS {
        let question = format!("What does the {} say about {} and {}?", words.word(), words.word(), words.word());
        let meaning = meaning.then(|| Meaning { model: MODEL.into(), vector: words.vector() });
        let started = Instant::now();
        let found = store.retrieve_passages(&[hash], &question, meaning.as_ref(), hearth_core::RETRIEVED_PASSAGES, true).await;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        if found.map_err(|e| format!("retrieval failed: {e}"))?.len() != hearth_core::RETRIEVED_PASSAGES {
            return Err(format!("{question:?} found fewer than {} passages", hearth_core::RETRIEVED_PASSAGES));
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times)
}
