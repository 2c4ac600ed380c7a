//! A reply's reasoning. Reasoning models open their reply with `<think>…</think>`, and a remote
//! API's reasoning, streamed apart from the answer (`reasoning_content`, thinking blocks), is
//! written into the reply the same way — so a reply is one text, stored, exported and shown as
//! one, whatever wrote it. The window shows the block apart (ui/src/lib/reasoning.ts reads it by
//! the same cases, `tests/data/reasoning_split.json`); Hearth's API answers it as
//! `reasoning_content`; a remote provider is not sent it back.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use ts_rs::TS;

use crate::chat::{ChatMessage, Role};

pub mod harmony;
mod reading;

pub use reading::{TextReader, TextReading};

pub const THINK_OPEN: &str = "<think>";
pub const THINK_CLOSE: &str = "</think>";
/// How a reply opens its text when its prompt opened the reasoning block (DeepSeek-R1's template
/// does): a block the reply is read to have opened itself.
pub const THINK_OPENED: &str = "<think>\n";
/// How a reasoning block is closed for the model (its budget spent, a call it must make): as
/// reasoning models close theirs, the answer after a blank line.
pub const THINK_CLOSING: &str = "\n</think>\n\n";

/// How a model writes its reasoning, read from its chat template (what the model was trained to
/// write), never from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum ReasoningFormat {
    /// The template knows no reasoning: there is nothing to switch off or bound.
    None,
    /// `<think>…</think>` before the answer (DeepSeek-R1's distills, Qwen3, Magistral…);
    /// `switchable`: the template reads `enable_thinking`, which Hearth sets when reasoning is off.
    ThinkTags { switchable: bool },
    /// gpt-oss's channels (OpenAI's harmony format): reasoning in an `analysis` channel.
    Channels,
}

/// The least budget Anthropic's extended thinking takes: a smaller one is raised to it.
pub const ANTHROPIC_THINKING_MIN: u32 = 1024;

/// OpenAI's `reasoning_effort` for a reasoning budget: each effort up to its bound, "high" above.
pub const REASONING_EFFORTS: [(i32, &str); 3] = [(0, "minimal"), (4096, "low"), (16384, "medium")];

/// The `reasoning_effort` sent for `budget`; none for no limit (the model's own default).
pub fn reasoning_effort(budget: i32) -> Option<&'static str> {
    (budget >= 0).then(|| REASONING_EFFORTS.iter().find(|(bound, _)| budget <= *bound).map_or("high", |(_, effort)| *effort))
}

/// Anthropic's thinking budget for `budget`: extended thinking is on only with a budget.
pub fn anthropic_thinking_budget(budget: i32) -> Option<u32> {
    u32::try_from(budget).ok().filter(|&b| b > 0).map(|b| b.max(ANTHROPIC_THINKING_MIN))
}

/// The reasoning format `template` (a Jinja chat template) renders.
pub fn reasoning_format(template: &str) -> ReasoningFormat {
    let switchable = template.contains("enable_thinking");
    if template.contains("<|channel|>") {
        ReasoningFormat::Channels
    } else if template.contains(THINK_OPEN) || template.contains(THINK_CLOSE) || template.contains("reasoning_content") || switchable {
        ReasoningFormat::ThinkTags { switchable }
    } else {
        ReasoningFormat::None
    }
}

/// A reply's text in its two parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyParts<'a> {
    /// The reasoning, trimmed; `None` when the reply has none (or an empty block).
    pub reasoning: Option<&'a str>,
    /// The block was closed (a reply cut off while thinking has no answer).
    pub closed: bool,
    /// The rest of the reply, its leading space trimmed.
    pub answer: &'a str,
}

/// Splits `content` into its leading reasoning block and its answer; a `<think>` anywhere but at
/// the start is ordinary text.
pub fn split_reasoning(content: &str) -> ReplyParts<'_> {
    let Some(body) = content.trim_start().strip_prefix(THINK_OPEN) else {
        return ReplyParts { reasoning: None, closed: false, answer: content };
    };
    let (reasoning, closed, answer) = match body.find(THINK_CLOSE) {
        Some(end) => (&body[..end], true, body[end + THINK_CLOSE.len()..].trim_start()),
        None => (body, false, ""),
    };
    let reasoning = reasoning.trim();
    ReplyParts { reasoning: (!reasoning.is_empty()).then_some(reasoning), closed, answer }
}

/// The reply as written when its reasoning came apart from its answer.
pub fn with_reasoning(reasoning: &str, answer: &str) -> String {
    if reasoning.is_empty() { answer.to_owned() } else { format!("{THINK_OPEN}{reasoning}{THINK_CLOSE}{answer}") }
}

/// Earlier replies without their reasoning, as a remote API wants them back (DeepSeek's refuses
/// `reasoning_content` in a request; the others drop it themselves).
pub fn drop_past_reasoning(messages: &mut [ChatMessage]) {
    for message in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
        let parts = split_reasoning(&message.content);
        if parts.reasoning.is_some() || parts.closed {
            message.content = parts.answer.to_owned();
        }
    }
}

/// A stretch of a streamed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyPiece {
    Reasoning(String),
    Answer(String),
}

/// Reads a reply's reasoning apart from its answer as it streams. What may yet turn out to be a
/// tag (`<thi`, `</thin`) is held back until it is known, so no piece of a tag is ever shown.
#[derive(Debug, Default, Clone)]
pub struct ReasoningStream {
    state: StreamState,
    held: String,
    /// Some reasoning was said (its leading space is skipped until then).
    reasoning_said: bool,
    /// The reply opened a reasoning block.
    opened: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum StreamState {
    /// Nothing but space yet: the reply may still open a block.
    #[default]
    Opening,
    Thinking,
    /// The block closed; the answer's leading space is being skipped.
    Closed,
    Answer,
}

impl ReasoningStream {
    pub fn new() -> ReasoningStream {
        ReasoningStream::default()
    }

    /// Whether the reply is inside its reasoning block now.
    pub fn thinking(&self) -> bool {
        self.state == StreamState::Thinking
    }

    /// Whether the reply opened a reasoning block, and it is closed.
    pub fn reasoned(&self) -> bool {
        self.opened && !self.thinking()
    }

    /// The pieces `delta` makes known.
    pub fn push(&mut self, delta: &str) -> Vec<ReplyPiece> {
        self.held.push_str(delta);
        let mut pieces = Vec::new();
        loop {
            match self.state {
                StreamState::Opening => {
                    let head = self.held.trim_start();
                    if let Some(rest) = head.strip_prefix(THINK_OPEN) {
                        self.held = rest.to_owned();
                        self.state = StreamState::Thinking;
                        self.opened = true;
                    } else if THINK_OPEN.starts_with(head) {
                        return pieces; // all space, or the start of the tag
                    } else {
                        self.state = StreamState::Answer;
                    }
                }
                StreamState::Thinking => match self.held.find(THINK_CLOSE) {
                    Some(end) => {
                        let rest = self.held.split_off(end + THINK_CLOSE.len());
                        self.held.truncate(end);
                        let reasoning = std::mem::replace(&mut self.held, rest);
                        self.say_reasoning(reasoning.trim_end(), &mut pieces);
                        self.state = StreamState::Closed;
                    }
                    None => {
                        // A closing tag may be on its way, and the space before it is not the
                        // reasoning's (it is trimmed, as the whole reply's is).
                        let keep = partial_tag_len(&self.held, THINK_CLOSE);
                        let said = self.held[..self.held.len() - keep].trim_end().len();
                        let rest = self.held.split_off(said);
                        let reasoning = std::mem::replace(&mut self.held, rest);
                        self.say_reasoning(&reasoning, &mut pieces);
                        return pieces;
                    }
                },
                StreamState::Closed => {
                    let trimmed = self.held.trim_start();
                    if trimmed.is_empty() {
                        self.held.clear();
                        return pieces;
                    }
                    self.held = trimmed.to_owned();
                    self.state = StreamState::Answer;
                }
                StreamState::Answer => {
                    push_answer(&mut pieces, std::mem::take(&mut self.held));
                    return pieces;
                }
            }
        }
    }

    /// What is still held back once the reply has ended: a half tag is text after all.
    pub fn finish(&mut self) -> Vec<ReplyPiece> {
        let held = std::mem::take(&mut self.held);
        let mut pieces = Vec::new();
        match self.state {
            StreamState::Thinking => self.say_reasoning(held.trim_end(), &mut pieces),
            StreamState::Opening | StreamState::Answer => push_answer(&mut pieces, held),
            StreamState::Closed => {}
        }
        pieces
    }
}

impl ReasoningStream {
    fn say_reasoning(&mut self, reasoning: &str, pieces: &mut Vec<ReplyPiece>) {
        let reasoning = if self.reasoning_said { reasoning } else { reasoning.trim_start() };
        if !reasoning.is_empty() {
            self.reasoning_said = true;
            pieces.push(ReplyPiece::Reasoning(reasoning.to_owned()));
        }
    }
}

fn push_answer(pieces: &mut Vec<ReplyPiece>, text: String) {
    if !text.is_empty() {
        pieces.push(ReplyPiece::Answer(text));
    }
}

/// How much of `text`'s end may be the start of `tag`.
pub(crate) fn partial_tag_len(text: &str, tag: &str) -> usize {
    (1..tag.len().min(text.len() + 1))
        .rev()
        .find(|&n| text.is_char_boundary(text.len() - n) && tag.starts_with(&text[text.len() - n..]))
        .unwrap_or(0)
}

/// How long a streamed reply reasoned: from its first text to the end of its reasoning block (or
/// to now, while it still reasons).
#[derive(Debug)]
pub struct ReasoningClock {
    stream: ReasoningStream,
    started: Option<Instant>,
    took: Option<Duration>,
    /// The stream has no reasoning block of its own (none opened, or the one continued is closed).
    none: bool,
}

impl ReasoningClock {
    /// `written`: the reply's text before this stream (a reply continued).
    pub fn new(written: &str) -> ReasoningClock {
        let mut stream = ReasoningStream::new();
        stream.push(written);
        let none = stream.reasoned() || (!written.trim().is_empty() && !stream.thinking());
        ReasoningClock { stream, started: None, took: None, none }
    }

    pub fn read(&mut self, delta: &str) {
        if self.none || self.took.is_some() {
            return;
        }
        let now = Instant::now();
        let started = *self.started.get_or_insert(now);
        self.stream.push(delta);
        if self.stream.reasoned() {
            self.took = Some(now - started);
        } else if !self.stream.thinking() && self.stream.state != StreamState::Opening {
            self.none = true;
        }
    }

    /// The time the reply's reasoning took, in milliseconds; `None` when it has none.
    pub fn ms(&self) -> Option<f64> {
        let took = match (self.none, self.took, self.started) {
            (true, _, _) => return None,
            (false, Some(took), _) => took,
            (false, None, Some(started)) if self.stream.thinking() => started.elapsed(),
            _ => return None,
        };
        Some(took.as_secs_f64() * 1000.0)
    }
}

/// Counts the tokens of a reply's reasoning block as they are written (the tokens that wrote its
/// tags included).
#[derive(Debug, Default, Clone)]
pub struct ReasoningCounter {
    stream: ReasoningStream,
    /// Tokens written while the reply might still open a block.
    before_open: u32,
    tokens: u32,
    done: bool,
}

impl ReasoningCounter {
    /// The prompt opened the block (the template wrote `<think>` after the assistant's turn
    /// opens): the reply's tokens are its reasoning from the first.
    pub fn opened_by_prompt(&mut self) {
        self.stream.push(THINK_OPEN);
    }

    /// A token written, with the text it released.
    pub fn token(&mut self, text: &str) {
        if self.done {
            return;
        }
        let opened = self.stream.opened;
        self.stream.push(text);
        if self.stream.opened {
            if !opened {
                self.tokens += self.before_open;
            }
            self.tokens += 1;
            self.done = !self.stream.thinking();
        } else if self.stream.state == StreamState::Opening {
            self.before_open += 1;
        } else {
            self.done = true; // the reply opened no block
        }
    }

    /// Whether the reply is inside its reasoning block now.
    pub fn thinking(&self) -> bool {
        self.stream.thinking()
    }

    /// The reasoning's tokens; `None` when the reply opened no block.
    pub fn tokens(&self) -> Option<u32> {
        self.stream.opened.then_some(self.tokens)
    }
}

/// Writes a remote API's reasoning, streamed apart from its answer, into the reply's text as a
/// leading block: opened with the first reasoning, closed when the answer (or a call, or the
/// end) comes.
#[derive(Debug, Default)]
pub struct ReasoningWriter {
    open: bool,
}

impl ReasoningWriter {
    /// `reasoning` as the reply's text.
    pub fn reasoning(&mut self, reasoning: &str, text: &mut String) {
        if reasoning.is_empty() {
            return;
        }
        if !self.open {
            text.push_str(THINK_OPEN);
            self.open = true;
        }
        text.push_str(reasoning);
    }

    /// Closes the block, if one is open: what comes next is the answer.
    pub fn close(&mut self, text: &mut String) {
        if std::mem::take(&mut self.open) {
            text.push_str(THINK_CLOSE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// The cases the window's splitter reads too (ui/src/lib/reasoning.test.ts).
    #[derive(Deserialize)]
    struct Case {
        content: String,
        reasoning: Option<String>,
        answer: String,
    }

    fn cases() -> Vec<Case> {
        serde_json::from_str(include_str!("../../tests/data/reasoning_split.json")).unwrap()
    }

    /// Templates written here in the shapes the families use (not their text): what each renders.
    #[test]
    fn a_template_says_how_its_model_reasons() {
        let think_switch = "{%- if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{%- endif %}";
        let opens_think = "{% if add_generation_prompt %}<|Assistant|><think>\n{% endif %}";
        let keeps_reasoning = "{% for m in messages %}{% if m.reasoning_content %}{{ m.reasoning_content }}{% endif %}{% endfor %}";
        let strips_past = "{% set content = message.content.split('</think>')[-1] %}";
        let harmony = "<|start|>assistant<|channel|>analysis<|message|>{{ thinking }}<|end|>";
        let chatml = "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}";
        for (template, format) in [
            (think_switch, ReasoningFormat::ThinkTags { switchable: true }),
            (opens_think, ReasoningFormat::ThinkTags { switchable: false }),
            (keeps_reasoning, ReasoningFormat::ThinkTags { switchable: false }),
            (strips_past, ReasoningFormat::ThinkTags { switchable: false }),
            (harmony, ReasoningFormat::Channels),
            (chatml, ReasoningFormat::None),
            ("", ReasoningFormat::None),
        ] {
            assert_eq!(reasoning_format(template), format, "{template}");
        }
    }

    #[test]
    fn a_budget_becomes_each_apis_reasoning_control() {
        for (budget, effort, thinking) in [
            (-1, None, None),
            (0, Some("minimal"), None),
            (1, Some("low"), Some(1024)),
            (4096, Some("low"), Some(4096)),
            (4097, Some("medium"), Some(4097)),
            (16384, Some("medium"), Some(16384)),
            (16385, Some("high"), Some(16385)),
        ] {
            assert_eq!((reasoning_effort(budget), anthropic_thinking_budget(budget)), (effort, thinking), "{budget}");
        }
    }

    #[test]
    fn a_reply_splits_as_the_window_splits_it() {
        for case in cases() {
            let parts = split_reasoning(&case.content);
            assert_eq!(parts.reasoning.map(str::to_owned), case.reasoning, "{:?}", case.content);
            assert_eq!(parts.answer, case.answer, "{:?}", case.content);
        }
    }

    #[test]
    fn streamed_in_any_pieces_a_reply_splits_as_it_does_whole() {
        for case in cases() {
            // Every split into pieces of n bytes (at character boundaries), 1 to 7.
            for n in 1..=7 {
                let mut stream = ReasoningStream::new();
                let (mut reasoning, mut answer) = (String::new(), String::new());
                let chars: Vec<char> = case.content.chars().collect();
                for piece in chars.chunks(n) {
                    let piece: String = piece.iter().collect();
                    for got in stream.push(&piece) {
                        match got {
                            ReplyPiece::Reasoning(t) => reasoning.push_str(&t),
                            ReplyPiece::Answer(t) => answer.push_str(&t),
                        }
                    }
                }
                for got in stream.finish() {
                    match got {
                        ReplyPiece::Reasoning(t) => reasoning.push_str(&t),
                        ReplyPiece::Answer(t) => answer.push_str(&t),
                    }
                }
                let whole = split_reasoning(&case.content);
                assert_eq!(reasoning, whole.reasoning.unwrap_or(""), "{:?} in pieces of {n}", case.content);
                assert_eq!(answer, whole.answer, "{:?} in pieces of {n}", case.content);
            }
        }
    }

    #[test]
    fn no_piece_of_a_tag_is_shown_while_it_is_written() {
        let mut stream = ReasoningStream::new();
        assert_eq!(stream.push("  <thi"), vec![]);
        assert_eq!(stream.push("nk>Hmm.</th"), vec![ReplyPiece::Reasoning("Hmm.".into())]);
        assert!(stream.thinking());
        assert_eq!(stream.push("ink>\n\n"), vec![]);
        assert!(!stream.thinking());
        assert_eq!(stream.push("Yes."), vec![ReplyPiece::Answer("Yes.".into())]);
        assert_eq!(stream.push(" <think>"), vec![ReplyPiece::Answer(" <think>".into())]);
    }

    #[test]
    fn past_reasoning_is_dropped_and_only_an_assistants() {
        let mut messages = vec![
            ChatMessage::new(Role::User, "<think>mine</think>Hi"),
            ChatMessage::new(Role::Assistant, "<think>Greet.</think>\n\nHello."),
            ChatMessage::new(Role::Assistant, "Plain <think>x</think>"),
        ];
        drop_past_reasoning(&mut messages);
        let contents: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(contents, ["<think>mine</think>Hi", "Hello.", "Plain <think>x</think>"]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_clock_runs_from_the_first_text_to_the_end_of_the_reasoning() {
        let mut clock = ReasoningClock::new("");
        tokio::time::advance(Duration::from_millis(700)).await; // the prompt is read
        clock.read("<think>Hmm");
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert_eq!(clock.ms(), Some(1500.0), "while it reasons, so far");
        clock.read(".</think>Yes");
        tokio::time::advance(Duration::from_millis(900)).await;
        clock.read(" indeed.");
        assert_eq!(clock.ms(), Some(1500.0));

        for (written, deltas) in [("", &["Plain answer."][..]), ("<think>Done.</think>Half", &["<think>"]), ("Half", &["<think>x</think>"])]
        {
            let mut clock = ReasoningClock::new(written);
            for delta in deltas {
                tokio::time::advance(Duration::from_millis(100)).await;
                clock.read(delta);
            }
            tokio::time::advance(Duration::from_millis(100)).await;
            assert_eq!(clock.ms(), None, "{written:?} then {deltas:?}: no reasoning of its own");
        }
    }

    #[test]
    fn the_reasoning_tokens_are_counted_with_their_tags() {
        for (tokens, expected) in [
            (&["<", "think", ">", "Hmm", ".", "</think>", "Yes", "."][..], Some(6)),
            (&["\n", "<think>", "Hmm", "</", "think", ">\n\n", "Yes"], Some(6)),
            (&["<think>", "Cut", " off"], Some(3)),
            (&["Plain", " <think>", "x", "</think>"], None),
            (&["<", "thing", ">"], None),
        ] {
            let mut counter = ReasoningCounter::default();
            for token in tokens {
                counter.token(token);
            }
            assert_eq!(counter.tokens(), expected, "{tokens:?}");
        }
    }

    #[test]
    fn a_block_the_prompt_opened_counts_from_the_first_token() {
        let mut counter = ReasoningCounter::default();
        counter.opened_by_prompt();
        for token in ["Hmm", ".", "</think>", "Yes"] {
            counter.token(token);
        }
        assert_eq!(counter.tokens(), Some(3));
    }

    #[test]
    fn a_remote_reasoning_is_written_as_a_leading_block() {
        let mut writer = ReasoningWriter::default();
        let mut text = String::new();
        writer.reasoning("Let me ", &mut text);
        writer.reasoning("see.", &mut text);
        writer.close(&mut text);
        text.push_str("Four.");
        writer.close(&mut text);
        assert_eq!(text, "<think>Let me see.</think>Four.");
        assert_eq!(split_reasoning(&text).reasoning, Some("Let me see."));
    }
}
