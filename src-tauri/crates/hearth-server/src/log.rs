//! The requests the server answered lately, for the window's live list (newest first).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use ts_rs::TS;

use hearth_core::ReplyStats;

/// One request and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RequestRecord {
    /// When it came, in Unix milliseconds.
    #[ts(type = "number")]
    pub at_ms: u64,
    /// The caller's address and port.
    pub client: String,
    pub model: String,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// From the request to its last byte.
    #[ts(type = "number")]
    pub ms: u64,
    /// The HTTP status; 499 when the client went away before the reply ended.
    pub status: u16,
}

/// How many requests are kept.
const KEPT: usize = 50;

#[derive(Clone, Default)]
pub struct RequestLog(Arc<Mutex<VecDeque<RequestRecord>>>);

impl RequestLog {
    /// The kept requests, newest first.
    pub fn recent(&self) -> Vec<RequestRecord> {
        self.0.lock().expect("request log poisoned").iter().cloned().collect()
    }

    fn push(&self, record: RequestRecord) {
        let mut log = self.0.lock().expect("request log poisoned");
        log.push_front(record);
        log.truncate(KEPT);
    }
}

/// A request being answered: written to the log once, when it ends — or, if the response is
/// dropped before that, as 499 (the client went away).
pub struct Entry {
    log: RequestLog,
    record: Option<RequestRecord>,
    started: Instant,
}

impl Entry {
    pub fn start(log: &RequestLog, client: String) -> Entry {
        let at_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let record = RequestRecord { at_ms, client, model: String::new(), prompt_tokens: 0, completion_tokens: 0, ms: 0, status: 499 };
        Entry { log: log.clone(), record: Some(record), started: Instant::now() }
    }

    pub fn client(&self) -> &str {
        self.record.as_ref().map_or("", |r| r.client.as_str())
    }

    pub fn model(&mut self, model: &str) {
        if let Some(record) = self.record.as_mut() {
            record.model = model.to_owned();
        }
    }

    pub fn finish(&mut self, status: u16, stats: Option<&ReplyStats>) {
        if let Some(record) = self.record.as_mut() {
            record.status = status;
            if let Some(stats) = stats {
                (record.prompt_tokens, record.completion_tokens) = (stats.prompt_tokens, stats.completion_tokens);
            }
        }
        self.write();
    }

    fn write(&mut self) {
        if let Some(mut record) = self.record.take() {
            record.ms = self.started.elapsed().as_millis() as u64;
            self.log.push(record);
        }
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.write();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_kept_newest_first_and_a_dropped_one_says_499() {
        let log = RequestLog::default();
        for i in 0..KEPT + 3 {
            let mut entry = Entry::start(&log, format!("client {i}"));
            entry.model("m");
            entry.finish(200, Some(&ReplyStats { prompt_tokens: 5, completion_tokens: 2, ..ReplyStats::default() }));
        }
        drop(Entry::start(&log, "gone".into()));
        let recent = log.recent();
        assert_eq!(recent.len(), KEPT);
        assert_eq!((recent[0].client.as_str(), recent[0].status), ("gone", 499));
        assert_eq!(
            (recent[1].client.as_str(), recent[1].status, recent[1].completion_tokens),
            (format!("client {}", KEPT + 2).as_str(), 200, 2)
        );
    }
}
