//! Full-text search over every message (SQLite FTS5). Whatever the user types is turned into
//! quoted FTS5 phrases, so quotes, operators and odd characters match literally and never error.

use hearth_core::{SearchHit, SnippetPart};

use crate::{Store, StoreError};

/// Marks around matched words in FTS5's snippet; control characters nobody types.
const HIT_START: char = '\u{2}';
const HIT_END: char = '\u{3}';
/// Words of context FTS5 puts in a snippet.
const SNIPPET_TOKENS: u32 = 16;

/// The FTS5 query for what the user typed: "double-quoted text" is one phrase, other words are
/// each a phrase, all must match, and the last bare word also matches as a prefix (search as you
/// type). `None` when nothing searchable is left.
pub fn fts_query(input: &str) -> Option<String> {
    let mut terms = Vec::new();
    for (i, part) in input.split('"').enumerate() {
        let quoted = i % 2 == 1;
        if quoted {
            terms.push((part.to_owned(), false));
        } else {
            terms.extend(part.split_whitespace().map(|w| (w.to_owned(), true)));
        }
    }
    terms.retain(|(t, _)| t.chars().any(char::is_alphanumeric));
    let last = terms.len().checked_sub(1)?;
    let phrases: Vec<String> = terms
        .iter()
        .enumerate()
        .map(|(i, (term, bare))| {
            let phrase = format!("\"{}\"", term.replace('"', "\"\""));
            if i == last && *bare { format!("{phrase}*") } else { phrase }
        })
        .collect();
    Some(phrases.join(" "))
}

/// Splits FTS5's marked snippet into plain-text parts.
fn snippet_parts(marked: &str) -> Vec<SnippetPart> {
    let mut parts = Vec::new();
    let mut hit = false;
    for piece in marked.split([HIT_START, HIT_END]) {
        if !piece.is_empty() {
            parts.push(SnippetPart { text: piece.to_owned(), hit });
        }
        hit = !hit;
    }
    parts
}

from_row! {
    struct HitRow {
        chat_id: i64,
        chat_title: String,
        message_id: i64,
        role: String,
        snippet: String,
        created_at: i64,
    }
}

/// Matches ranked, newest first. Ranking every match of a word found in nearly every message
/// takes most of a second at a million messages; people look for recent things in their history.
const RANKED_MATCHES: i64 = 2000;

impl Store {
    /// Among the newest `RANKED_MATCHES` messages matching `input`: best first (then newest), at
    /// most `limit`.
    pub async fn search(&self, input: &str, limit: u32) -> Result<Vec<SearchHit>, StoreError> {
        let Some(query) = fts_query(input) else { return Ok(Vec::new()) };
        let oldest_ranked: Option<i64> =
            sqlx::query_scalar("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2")
                .bind(&query)
                .bind(RANKED_MATCHES - 1)
                .fetch_optional(self.pool())
                .await?;
        let rows: Vec<HitRow> = sqlx::query_as(&format!(
            "SELECT m.chat_id, c.title AS chat_title, m.id AS message_id, m.role, m.created_at,
                    snippet(messages_fts, 0, '{HIT_START}', '{HIT_END}', '…', {SNIPPET_TOKENS}) AS snippet
             FROM messages_fts
             JOIN messages AS m ON m.id = messages_fts.rowid
             JOIN chats AS c ON c.id = m.chat_id
             WHERE messages_fts MATCH ?1 AND messages_fts.rowid >= ?3
             ORDER BY rank, m.id DESC
             LIMIT ?2"
        ))
        .bind(query)
        .bind(limit)
        .bind(oldest_ranked.unwrap_or(0))
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let role = hearth_core::Role::parse(&r.role)
                    .ok_or_else(|| StoreError::InvalidRow(format!("message {}: unknown role", r.message_id)))?;
                Ok(SearchHit {
                    chat_id: r.chat_id,
                    chat_title: r.chat_title,
                    message_id: r.message_id,
                    role,
                    snippet: snippet_parts(&r.snippet),
                    created_at: r.created_at,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_input_becomes_literal_phrases() {
        let cases: &[(&str, Option<&str>)] = &[
            ("paris", Some("\"paris\"*")),
            ("capital of france", Some("\"capital\" \"of\" \"france\"*")),
            ("\"new york\" pizza", Some("\"new york\" \"pizza\"*")),
            ("\"new york\"", Some("\"new york\"")),
            ("NOT OR AND NEAR(", Some("\"NOT\" \"OR\" \"AND\" \"NEAR(\"*")),
            ("unbalanced \"quote", Some("\"unbalanced\" \"quote\"")),
            ("col:umn ^start -minus", Some("\"col:umn\" \"^start\" \"-minus\"*")),
            ("", None),
            ("   \"\" ** ()", None),
        ];
        for (input, expected) in cases {
            assert_eq!(fts_query(input).as_deref(), *expected, "{input:?}");
        }
    }

    #[test]
    fn snippets_split_into_marked_parts() {
        let parts = snippet_parts("the \u{2}capital\u{3} of \u{2}France\u{3}…");
        let shown: Vec<(&str, bool)> = parts.iter().map(|p| (p.text.as_str(), p.hit)).collect();
        assert_eq!(shown, [("the ", false), ("capital", true), (" of ", false), ("France", true), ("…", false)]);
        let leading = snippet_parts("\u{2}Paris\u{3} is");
        assert_eq!(leading[0], SnippetPart { text: "Paris".into(), hit: true });
    }
}
