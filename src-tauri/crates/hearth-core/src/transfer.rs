//! Moving chats in and out of Hearth: export formats and what an import did.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ChatSummary;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// Lossless: every branch, status, stat and per-chat setting; `import` reads it back.
    Json,
    /// For reading: each chat's conversation as shown.
    Markdown,
}

impl ExportFormat {
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::Markdown => "md",
        }
    }
}

/// What an import did. Each chat is imported whole or not at all.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
pub struct ImportReport {
    pub imported: Vec<ChatSummary>,
    pub skipped: Vec<SkippedChat>,
    /// Parts of imported chats that were left out, e.g. settings this version cannot use.
    pub notes: Vec<String>,
}

/// A chat of the file that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SkippedChat {
    /// Its title, or "chat N" (its place in the file) when it has none.
    pub chat: String,
    pub reason: String,
}
