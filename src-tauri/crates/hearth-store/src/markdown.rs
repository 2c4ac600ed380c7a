//! The Markdown export: each chat's conversation as shown in the app, for reading. Branches
//! not on show are counted, not printed (the JSON export has them).

use std::collections::HashMap;
use std::fmt::Write;

use hearth_core::{MessageStatus, Role};

use crate::archive::{Archive, ArchivedChat, ArchivedMessage};

pub fn to_markdown(archive: &Archive) -> String {
    let mut out = String::new();
    for (i, chat) in archive.chats.iter().enumerate() {
        if i > 0 {
            out.push_str("\n---\n\n");
        }
        write_chat(&mut out, chat);
    }
    out
}

fn write_chat(out: &mut String, chat: &ArchivedChat) {
    let title = if chat.title.trim().is_empty() { "New chat" } else { chat.title.trim() };
    let _ = writeln!(out, "# {}\n", one_line(title));
    let _ = writeln!(out, "*Started {} · last message {}*\n", date(chat.created_at), date(chat.updated_at));
    if !chat.system_prompt.trim().is_empty() {
        let _ = writeln!(out, "**System prompt**\n\n{}\n", quote(&chat.system_prompt));
    }
    let path = path_on_show(chat);
    for message in &path {
        let _ = writeln!(out, "## {}\n\n{}\n", heading(message), message.content.trim_end());
        if !message.attachments.is_empty() {
            let files: Vec<String> =
                message.attachments.iter().map(|file| format!("{} ({})", escape(&one_line(&file.name)), size(file.bytes))).collect();
            let _ = writeln!(out, "*Attached: {}*\n", files.join(", "));
        }
        if let Some(note) = status_note(message.status) {
            let _ = writeln!(out, "*{note}*\n");
        }
    }
    let hidden = chat.messages.len() - path.len();
    if hidden > 0 {
        let _ = writeln!(
            out,
            "*{hidden} more message{} in other branches (edits and regenerations) are in the JSON export.*\n",
            if hidden == 1 { "" } else { "s" }
        );
    }
}

/// Root to the message on show.
fn path_on_show(chat: &ArchivedChat) -> Vec<&ArchivedMessage> {
    let by_id: HashMap<u32, &ArchivedMessage> = chat.messages.iter().map(|m| (m.id, m)).collect();
    let mut path = Vec::new();
    let mut next = chat.current_leaf.and_then(|id| by_id.get(&id).copied());
    while let Some(message) = next {
        path.push(message);
        next = message.parent.and_then(|id| by_id.get(&id).copied());
    }
    path.reverse();
    path
}

fn heading(message: &ArchivedMessage) -> String {
    match (message.role, &message.model) {
        (Role::User, _) => "You".into(),
        (Role::System, _) => "System".into(),
        (Role::Assistant, Some(model)) => format!("Assistant · {}", one_line(model)),
        (Role::Assistant, None) => "Assistant".into(),
        (Role::Tool, _) => match &message.tool {
            Some(run) => format!("Tool · {}", one_line(&run.name)),
            None => "Tool".into(),
        },
    }
}

fn status_note(status: MessageStatus) -> Option<&'static str> {
    match status {
        MessageStatus::Complete => None,
        MessageStatus::Stopped => Some("(stopped)"),
        MessageStatus::Interrupted | MessageStatus::Streaming => Some("(interrupted: Hearth closed while this was being written)"),
        MessageStatus::Failed => Some("(failed before it finished)"),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A file's name as plain text in Markdown: the characters that mark emphasis, code, links,
/// HTML or tables escaped, so that a name such as `*x*`, `[a](b)` or `<img>` reads as it is.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\`*_[]<>|~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A file's size as people read it: bytes, KB or MB (1,000s, as file managers on Linux show).
fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.1} KB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

fn quote(text: &str) -> String {
    text.trim_end().lines().map(|line| format!("> {line}")).collect::<Vec<_>>().join("\n")
}

/// `YYYY-MM-DD` (UTC) of Unix milliseconds.
fn date(unix_ms: i64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let days = unix_ms.div_euclid(86_400_000) + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::{date, escape, size};

    #[test]
    fn file_names_read_as_they_are_and_sizes_as_people_read_them() {
        assert_eq!(escape("notes_v2 *final* [a](b) <img>.md"), r"notes\_v2 \*final\* \[a\](b) \<img\>.md");
        for (bytes, expected) in [(93, "93 bytes"), (1_000, "1.0 KB"), (48_213, "48.2 KB"), (1_250_000, "1.2 MB")] {
            assert_eq!(size(bytes), expected, "{bytes}");
        }
    }

    #[test]
    fn dates_are_utc_calendar_days() {
        let cases = [
            (0, "1970-01-01"),
            (951_782_400_000, "2000-02-29"),
            (1_795_219_199_999, "2026-11-20"),
            (1_795_219_200_000, "2026-11-21"),
            (-86_400_000, "1969-12-31"),
        ];
        for (ms, expected) in cases {
            assert_eq!(date(ms), expected, "{ms}");
        }
    }
}
