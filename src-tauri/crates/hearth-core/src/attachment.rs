//! Files attached to a user message, and how a model reads them: each document whole, before the
//! question, in a block that names it — or, when the documents do not fit the model's context,
//! the passages retrieved for the question, each naming its document. The blocks are written the
//! same way at every turn, so the tokens read once stay in the chat's KV cache (the next question
//! reads none of them again).

use std::collections::HashMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::sampling::whole;
use crate::{FieldError, FieldRange};

/// What kind of file an attachment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum AttachmentKind {
    Document,
    /// An image, for a model that reads images (its text is none).
    Image,
}

/// The largest image read, in pixels (an 8,000 × 6,000 photo is 48 million): a 30,000 × 30,000
/// one would take 2.7 GB once decoded, before a projector shrinks it to its few hundred pixels.
pub const MAX_IMAGE_PIXELS: u64 = 50_000_000;

/// How large a file a message may carry, as the user sets it (Settings → Attachments): a larger
/// one is refused in words that say where to change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct AttachmentLimits {
    /// The largest file read, in megabytes.
    pub max_file_mb: u32,
    /// The largest image, in megapixels: at most what the engine reads ([`MAX_IMAGE_PIXELS`]).
    pub max_image_megapixels: u32,
}

impl Default for AttachmentLimits {
    fn default() -> Self {
        AttachmentLimits { max_file_mb: 64, max_image_megapixels: (MAX_IMAGE_PIXELS / 1_000_000) as u32 }
    }
}

/// The largest file a user may allow: 2 GB, read into memory whole.
const MAX_FILE_MB: u32 = 2048;

const ATTACHMENT_RANGES: &[FieldRange] = &[
    whole("maxFileMb", 1.0, MAX_FILE_MB as f64, "between 1 and 2048 MB"),
    whole("maxImageMegapixels", 1.0, (MAX_IMAGE_PIXELS / 1_000_000) as f64, "between 1 and 50 megapixels"),
];

impl AttachmentLimits {
    pub fn ranges() -> &'static [FieldRange] {
        ATTACHMENT_RANGES
    }

    pub fn max_file_bytes(&self) -> u64 {
        u64::from(self.max_file_mb) << 20
    }

    pub fn max_image_pixels(&self) -> u64 {
        u64::from(self.max_image_megapixels) * 1_000_000
    }

    pub fn validate(&self) -> Result<(), FieldError> {
        for range in ATTACHMENT_RANGES {
            let (value, label) = match range.key {
                "maxFileMb" => (self.max_file_mb, "the largest file"),
                "maxImageMegapixels" => (self.max_image_megapixels, "the largest image"),
                _ => continue, // A range without a check here fails the_ranges_are_what_validate_enforces.
            };
            if !(range.min..=range.max).contains(&f64::from(value)) {
                return Err(FieldError::new(range.key, format!("{label} must be {}", range.text)));
            }
        }
        Ok(())
    }
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

/// A passage of an attached document, given to the model in place of the whole (the document did
/// not fit): the reply's sources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Passage {
    /// The document's hash ([`Attachment::hash`]).
    pub hash: String,
    /// The document's name as attached.
    pub name: String,
    /// Its place among the document's passages (0 = the first).
    pub ordinal: u32,
    pub text: String,
}

/// How many passages a question is given from documents too long to read whole.
pub const RETRIEVED_PASSAGES: usize = 5;

/// About how long a passage is, in characters: a few paragraphs (a passage ends at a paragraph,
/// line or sentence end where one is near).
pub const PASSAGE_CHARS: usize = 1200;

/// Tokens of the context kept for the rest of the conversation and the reply when deciding
/// whether documents go in whole: this many, or a quarter of a smaller context.
const CONTEXT_KEPT_TOKENS: u64 = 1024;

/// Characters per token of a document, counted low (code and non-English text take more tokens
/// per character than prose), so a document judged to fit does fit.
const CHARS_PER_TOKEN_LOW: u64 = 3;

/// The context assumed for a model whose context length is not known (a remote one).
const UNKNOWN_CONTEXT_TOKENS: u32 = 32_768;

/// The characters of documents (whole, or passages of them) one question is given for a model
/// with a context of `context_tokens` (`None`: not known), leaving room for the conversation
/// and the reply.
pub fn document_budget(context_tokens: Option<u32>) -> u64 {
    let context = u64::from(context_tokens.unwrap_or(UNKNOWN_CONTEXT_TOKENS));
    (context - CONTEXT_KEPT_TOKENS.min(context / 4)) * CHARS_PER_TOKEN_LOW
}

/// Where `text` is cut into passages of about [`PASSAGE_CHARS`] characters: byte ranges that
/// cover it in order, each ending at a paragraph break, else a line break, else a sentence's or
/// word's end in its last third, else mid-word (on a character boundary).
pub fn passage_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let rest = &text[start..];
        if rest.len() <= PASSAGE_CHARS {
            ranges.push(start..text.len());
            break;
        }
        let mut limit = PASSAGE_CHARS;
        while !rest.is_char_boundary(limit) {
            limit -= 1;
        }
        let window = &rest[..limit];
        let floor = limit / 3;
        let cut = ["\n\n", "\n", ". ", "? ", "! ", " "]
            .iter()
            .find_map(|mark| window.rfind(mark).filter(|&at| at >= floor).map(|at| at + mark.len()))
            .unwrap_or(limit);
        ranges.push(start..start + cut);
        start += cut;
    }
    ranges.retain(|r| !text[r.clone()].trim().is_empty());
    ranges
}

/// A user message as the model reads it: the passages retrieved for it from its documents (each
/// naming its document), then the question.
pub fn with_passages(question: &str, passages: &[Passage]) -> String {
    let mut content = String::new();
    for passage in passages {
        content += &format!(
            "<passage document=\"{}\" number=\"{}\">\n{}\n</passage>\n\n",
            escape_name(&passage.name),
            passage.ordinal + 1,
            passage.text.trim()
        );
    }
    content + question
}

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

/// The document blocks a user message starts with, as [`with_documents`] writes them, each whole
/// (its markers and the blank line after it): what the model reads of each document.
pub fn document_blocks(content: &str) -> Vec<&str> {
    const OPEN: &str = "<document name=\"";
    const CLOSE: &str = "\n</document>\n\n";
    let mut blocks = Vec::new();
    let mut rest = content;
    while rest.starts_with(OPEN) {
        let Some(end) = rest.find(CLOSE) else { break };
        let (block, after) = rest.split_at(end + CLOSE.len());
        blocks.push(block);
        rest = after;
    }
    blocks
}

/// A file name inside the block's quotes: quotes, angle brackets and line breaks would let a name
/// end the block early.
fn escape_name(name: &str) -> String {
    name.chars().map(|c| if matches!(c, '"' | '<' | '>' | '\n' | '\r') { '_' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_ranges_are_what_validate_enforces() {
        for range in AttachmentLimits::ranges() {
            for (value, ok) in [(range.min, true), (range.max, true), (range.max + 1.0, false), (range.min - 1.0, false)] {
                let mut json = serde_json::to_value(AttachmentLimits::default()).unwrap();
                json[range.key] = serde_json::json!(value as u64);
                let limits: AttachmentLimits = serde_json::from_value(json).unwrap();
                assert_eq!(limits.validate().is_ok(), ok, "{} = {value}: {:?}", range.key, limits.validate());
                if !ok {
                    assert_eq!(limits.validate().unwrap_err().field, range.key);
                }
            }
        }
        let parsed: AttachmentLimits = serde_json::from_str(r#"{"maxFileMb":2}"#).unwrap();
        assert_eq!((parsed.max_file_bytes(), parsed.max_image_pixels()), (2 << 20, MAX_IMAGE_PIXELS), "missing fields take defaults");
    }

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
    fn each_document_block_is_found_whole_in_the_order_written() {
        let texts = DocumentTexts::from([("h1".into(), "Alpha text.".into()), ("h2".into(), "Beta\n".into())]);
        let content = with_documents("What differs?", &[doc("h1", "a.md"), doc("h2", "b.txt")], &texts);
        let blocks = document_blocks(&content);
        assert_eq!(blocks, ["<document name=\"a.md\">\nAlpha text.\n</document>\n\n", "<document name=\"b.txt\">\nBeta\n</document>\n\n"]);
        assert_eq!(format!("{}What differs?", blocks.concat()), content);
        assert!(document_blocks("What differs?").is_empty());
        assert!(document_blocks("<document name=\"cut\">\nno end").is_empty());
    }

    #[test]
    fn a_message_without_documents_is_its_question() {
        assert_eq!(with_documents("Hi", &[], &DocumentTexts::new()), "Hi");
    }

    #[test]
    fn passages_come_first_each_naming_its_document() {
        let passage = |ordinal, text: &str| Passage { hash: "a".into(), name: "guide.md".into(), ordinal, text: text.into() };
        let content = with_passages("When?", &[passage(3, " In May.\n"), passage(0, "Intro")]);
        assert_eq!(
            content,
            "<passage document=\"guide.md\" number=\"4\">\nIn May.\n</passage>\n\n<passage document=\"guide.md\" number=\"1\">\nIntro\n</passage>\n\nWhen?"
        );
    }

    #[test]
    fn passages_cover_the_text_and_end_at_natural_breaks() {
        let paragraph = "A sentence of some length here. ".repeat(12);
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "empty"),
            ("short".into(), "short"),
            (format!("{paragraph}\n\n").repeat(5), "paragraphs"),
            ("word ".repeat(1000), "words"),
            ("é".repeat(2000), "no breaks, two-byte characters"),
        ];
        for (text, what) in cases {
            let ranges = passage_ranges(&text);
            let joined: String = ranges.iter().map(|r| &text[r.clone()]).collect();
            assert_eq!(joined.trim(), text.trim(), "{what}: passages cover the text");
            for range in &ranges {
                assert!(range.len() <= PASSAGE_CHARS, "{what}: {range:?} too long");
            }
            if what == "paragraphs" {
                assert!(ranges.iter().all(|r| text[r.clone()].ends_with("\n\n")), "{what}: {ranges:?}");
            }
        }
    }

    #[test]
    fn documents_leave_room_for_the_conversation_and_the_reply() {
        for (context, chars) in [(Some(1024), 2304), (Some(2048), 4608), (Some(4096), 9216), (Some(8192), 21_504), (None, 95_232)] {
            assert_eq!(document_budget(context), chars, "{context:?}");
        }
    }

    #[test]
    fn hashes_are_lowercase_sha256_hex() {
        assert!(Attachment::is_hash(&"ab".repeat(32)));
        for bad in ["AB".repeat(32), "ab".repeat(31), "zz".repeat(32), "../".repeat(21) + "a"] {
            assert!(!Attachment::is_hash(&bad), "{bad}");
        }
    }
}
