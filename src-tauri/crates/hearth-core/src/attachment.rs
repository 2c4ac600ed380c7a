//! Files attached to a user message, and how a model reads them: each document whole, before the
//! question, in a block that names it. The block is written the same way at every turn, so the
//! tokens of a document read once stay in the chat's KV cache (the next question reads none of it
//! again).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What kind of file an attachment is (images later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum AttachmentKind {
    Document,
}

/// A file attached to a user message: stored once per content (`hash`, SHA-256 of its bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub hash: String,
    pub name: String,
    pub kind: AttachmentKind,
    /// The file's size in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// How many characters of text the model reads from it.
    #[ts(type = "number")]
    pub chars: u64,
}

/// The most files one message carries.
pub const MAX_ATTACHMENTS: usize = 16;

impl Attachment {
    /// Whether `hash` is a SHA-256 written in lowercase hex, as the store keeps them.
    pub fn is_hash(hash: &str) -> bool {
        hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    }
}

/// The attached documents' texts by hash, as the store hands them to a turn.
pub type DocumentTexts = HashMap<String, String>;

/// A user message as the model reads it: each attached document in a block naming it, then the
/// question. A document whose text is missing from `texts` is left out (the turn checks first).
pub fn with_documents(question: &str, attachments: &[Attachment], texts: &DocumentTexts) -> String {
    let mut content = String::new();
    for attachment in attachments {
        let Some(text) = texts.get(&attachment.hash) else { continue };
        content += &format!("<document name=\"{}\">\n{}\n</document>\n\n", escape_name(&attachment.name), text.trim_end());
    }
    content + question
}

/// A file name inside the block's quotes: quotes, angle brackets and line breaks would let a name
/// end the block early.
fn escape_name(name: &str) -> String {
    name.chars().map(|c| if matches!(c, '"' | '<' | '>' | '\n' | '\r') { '_' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(hash: &str, name: &str) -> Attachment {
        Attachment { hash: hash.into(), name: name.into(), kind: AttachmentKind::Document, bytes: 1, chars: 1 }
    }

    #[test]
    fn documents_come_first_each_in_a_named_block() {
        let texts = DocumentTexts::from([("a".into(), "Alpha text.\n\n".into()), ("b".into(), "Beta".into())]);
        let content = with_documents("What differs?", &[doc("a", "a.md"), doc("b", "x\"><y.txt")], &texts);
        assert_eq!(
            content,
            "<document name=\"a.md\">\nAlpha text.\n</document>\n\n<document name=\"x___y.txt\">\nBeta\n</document>\n\nWhat differs?"
        );
    }

    #[test]
    fn a_message_without_documents_is_its_question() {
        assert_eq!(with_documents("Hi", &[], &DocumentTexts::new()), "Hi");
    }

    #[test]
    fn hashes_are_lowercase_sha256_hex() {
        assert!(Attachment::is_hash(&"ab".repeat(32)));
        for bad in ["AB".repeat(32), "ab".repeat(31), "zz".repeat(32), "../".repeat(21) + "a"] {
            assert!(!Attachment::is_hash(&bad), "{bad}");
        }
    }
}
