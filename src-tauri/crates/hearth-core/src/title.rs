//! Chat titles written by the model from the first exchange, beside the conversation (an aside),
//! after the reply has finished.

use crate::{BackendError, CancelFlag, ChatBackend, ChatMessage, FinishReason, GenEvent, ModelTarget, ReplyRequest, Role, SamplingParams};

/// Tokens a title may take.
const TITLE_TOKENS: u32 = 16;
/// Characters of each message shown to the model: enough for the topic. Text of unusual
/// characters takes several tokens each (a reply that went off the rails, a script the vocabulary
/// spells byte by byte): when the excerpts do not fit the backend's small aside context, shorter
/// ones are tried.
const EXCERPT_CHARS: [usize; 3] = [300, 100, 30];
/// Longest title kept, in characters.
pub const TITLE_CHARS: usize = 60;

const INSTRUCTION: &str = "Write a title of at most six words for the conversation below. \
Reply with the title only: no quotes, no explanation.";

/// The title `target` writes for a chat that began with `user` and `reply`; `None` when it wrote
/// nothing usable or a reply took the backend first.
pub async fn generate_title<B: ChatBackend + ?Sized>(
    backend: &B,
    target: ModelTarget,
    user: &str,
    reply: &str,
) -> Result<Option<String>, BackendError> {
    // A reasoning model's reply is read by its answer (its reasoning, if that is all it wrote).
    let parts = crate::split_reasoning(reply);
    let reply = if parts.answer.trim().is_empty() { parts.reasoning.unwrap_or_default() } else { parts.answer };
    for (i, chars) in EXCERPT_CHARS.into_iter().enumerate() {
        let prompt = format!("{INSTRUCTION}\n\nUser: {}\n\nAssistant: {}", excerpt(user, chars), excerpt(reply, chars));
        match ask(backend, target.clone(), prompt).await {
            Err(BackendError::ContextOverflow { .. }) if i + 1 < EXCERPT_CHARS.len() => continue,
            outcome => return outcome,
        }
    }
    unreachable!("the last length's outcome is returned")
}

async fn ask<B: ChatBackend + ?Sized>(backend: &B, target: ModelTarget, prompt: String) -> Result<Option<String>, BackendError> {
    let mut sampling = SamplingParams::greedy(TITLE_TOKENS);
    // A local reasoning model titles without reasoning: its template is told, a block it opens is
    // closed at once. (A remote model is sent no reasoning control: one that takes none refuses it.)
    if matches!(target, ModelTarget::Local { .. }) {
        sampling.reasoning_budget = 0;
    }
    let mut request = ReplyRequest::new(vec![ChatMessage::new(Role::User, prompt)], sampling, CancelFlag::new());
    request.target = target;
    let mut stream = backend.start_aside(request)?;
    let mut text = String::new();
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(delta) => text.push_str(&delta),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => {}
            GenEvent::Finished { reason: FinishReason::Cancelled, .. } => return Ok(None),
            GenEvent::Finished { .. } => return Ok(clean_title(crate::split_reasoning(&text).answer)),
            GenEvent::Failed(error) => return Err(error),
        }
    }
    Err(BackendError::EngineGone)
}

fn excerpt(text: &str, chars: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// A model's title made fit to show: its first line, without a "Title:" label, quotes, Markdown
/// marks or closing punctuation, at most `TITLE_CHARS` characters.
pub fn clean_title(raw: &str) -> Option<String> {
    let line = raw.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = strip_label(line);
    let decoration = |c: char| matches!(c, '"' | '\'' | '“' | '”' | '‘' | '’' | '«' | '»' | '*' | '_' | '#' | '`') || c.is_whitespace();
    let line = line.trim_matches(decoration).trim_end_matches(['.', '!', ':', ';', ',']).trim_matches(decoration);
    let title = first_clause(&line.split_whitespace().collect::<Vec<_>>().join(" "));
    if title.is_empty() {
        return None;
    }
    Some(match title.char_indices().nth(TITLE_CHARS - 1) {
        Some((end, _)) => format!("{}…", title[..end].trim_end()),
        None => title,
    })
}

/// Small models answer with a sentence rather than a title: a long one is cut at its first
/// clause (comma, semicolon, colon, dash) when that leaves a few words.
fn first_clause(title: &str) -> String {
    const LONG_WORDS: usize = 6;
    if title.split_whitespace().count() <= LONG_WORDS {
        return title.to_owned();
    }
    let cut = title.find([',', ';', ':']).into_iter().chain(title.find(" - ")).chain(title.find(" — ")).min();
    match cut {
        Some(at) if title[..at].split_whitespace().count() >= 2 => title[..at].trim_end_matches(['.', '!']).to_owned(),
        _ => title.to_owned(),
    }
}

fn strip_label(line: &str) -> &str {
    let lower = line.to_lowercase();
    for label in ["title:", "**title:**", "title -"] {
        if lower.starts_with(label) && line.is_char_boundary(label.len()) {
            return line[label.len()..].trim();
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_cleaned_to_one_plain_line() {
        let long = "word ".repeat(30);
        let cases: &[(&str, Option<&str>)] = &[
            ("The Sea and Its Tides", Some("The Sea and Its Tides")),
            ("\"Exploring the Ocean\"", Some("Exploring the Ocean")),
            ("Title: Mountain Weather.", Some("Mountain Weather")),
            ("**Title:** Cooking Rice", Some("Cooking Rice")),
            ("  \n  # Learning Rust!  \nmore text", Some("Learning Rust")),
            ("“Café   culture”", Some("Café culture")),
            ("", None),
            ("  \"\" ", None),
            ("...", None),
            ("L'Étoile is the capital of France, a city of ancient architecture", Some("L'Étoile is the capital of France")),
            ("Tides, moons and seas", Some("Tides, moons and seas")),
            ("Rust: a language for systems that last a long time", Some("Rust: a language for systems that last a long time")),
        ];
        for (raw, expected) in cases {
            assert_eq!(clean_title(raw).as_deref(), *expected, "{raw:?}");
        }
        let cut = clean_title(&long).unwrap();
        assert_eq!(cut.chars().count(), TITLE_CHARS);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn excerpts_cut_long_text_on_a_character_boundary() {
        assert_eq!(excerpt("  short  ", 300), "short");
        let long = "é".repeat(305);
        assert_eq!(excerpt(&long, 300).chars().count(), 301);
    }
}
