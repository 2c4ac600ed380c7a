//! gpt-oss's channels (OpenAI's harmony format), read as the reply Hearth stores. The model
//! writes each message of its turn as `<|channel|>NAME<|message|>TEXT<|end|>`, the next opened
//! with `<|start|>assistant`: its reasoning in `analysis`, its answer in `final`. The engine turns
//! that into the one shape every other part reads — the reasoning as a leading `<think>` block,
//! then the answer, a call to a function as Hearth's call block (`crate::call_block`) — and back
//! (`to_harmony`) where a template must see a reply as written.

use super::{THINK_CLOSE, THINK_OPEN, partial_tag_len, split_reasoning};
use crate::call_block;

pub const CHANNEL: &str = "<|channel|>";
pub const MESSAGE: &str = "<|message|>";
pub const START: &str = "<|start|>";
pub const END: &str = "<|end|>";
/// Where a call to one of the functions offered names it (in its message's header).
pub const CALL_RECIPIENT: &str = " to=functions.";
/// What the model writes to open its reasoning (after the prompt's `<|start|>assistant`).
pub const ANALYSIS_OPENING: &str = "<|channel|>analysis<|message|>";
/// What closes the reasoning and opens the answer: written for the model when its reasoning
/// budget is spent.
pub const ANALYSIS_TO_FINAL: &str = "<|end|><|start|>assistant<|channel|>final<|message|>";

/// Markers that end a message's text: `<|return|>` and `<|call|>` end the turn (llama.cpp stops
/// on them, so they reach the text only from a model that is not gpt-oss's own).
const BODY_ENDS: [&str; 4] = [END, START, "<|return|>", "<|call|>"];
/// A header longer than this is not one: the text is shown as it is.
const MAX_HEADER: usize = 256;

/// gpt-oss's `reasoning_effort` (its template's system message) for a reasoning budget in
/// tokens: it knows low, medium and high.
pub fn harmony_effort(budget: i32) -> Option<&'static str> {
    super::reasoning_effort(budget).map(|effort| if effort == "minimal" { "low" } else { effort })
}

/// A stored reply (`<think>…</think>answer`) as gpt-oss wrote it after `<|start|>assistant`: a
/// reply continued is written on in the model's own format.
pub fn to_harmony(content: &str) -> String {
    let parts = split_reasoning(content);
    match (parts.reasoning, parts.closed) {
        (None, false) => format!("{CHANNEL}final{MESSAGE}{content}"),
        (reasoning, false) => format!("{ANALYSIS_OPENING}{}", reasoning.unwrap_or_default()),
        (reasoning, true) => format!("{ANALYSIS_OPENING}{}{ANALYSIS_TO_FINAL}{}", reasoning.unwrap_or_default(), parts.answer),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    Analysis,
    /// The answer (`final`), or a preamble to the user (`commentary` to no one).
    Answer,
    /// A call to one of the functions offered: its arguments, read whole.
    Call,
    /// A message to a tool Hearth did not offer (`to=browser.search`): kept as written.
    Verbatim,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a message's header, up to its `<|message|>`.
    #[default]
    Header,
    Body(Body),
    /// The model writes no channels: its text is the answer as it is.
    Plain,
}

/// Turns gpt-oss's streamed text into the reply's text as Hearth stores it, piece by piece. What
/// may yet be a marker is held back until it is known, so no piece of one is ever shown.
#[derive(Debug, Default, Clone)]
pub struct HarmonyStream {
    state: State,
    held: String,
    /// The `<think>` block is open.
    thinking: bool,
    /// The reply's reasoning block was opened (a later analysis is the answer's text).
    reasoned: bool,
    /// The function a call in hand names, and its arguments so far.
    call: Option<(String, String)>,
}

impl HarmonyStream {
    pub fn new() -> HarmonyStream {
        HarmonyStream::default()
    }

    /// The stream of a reply that goes on from `written` (as stored; `None`: a new reply).
    pub fn continuing(written: Option<&str>) -> HarmonyStream {
        let Some(written) = written else { return HarmonyStream::new() };
        let parts = split_reasoning(written);
        let thinking = !parts.closed && parts.reasoning.is_some();
        let state = State::Body(if thinking { Body::Analysis } else { Body::Answer });
        HarmonyStream { state, held: String::new(), thinking, reasoned: true, call: None }
    }

    /// The reply's text for `delta`.
    pub fn push(&mut self, delta: &str) -> String {
        self.held.push_str(delta);
        let mut out = String::new();
        loop {
            match self.state {
                State::Plain => {
                    out.push_str(&std::mem::take(&mut self.held));
                    return out;
                }
                State::Header => {
                    let Some(at) = self.held.find(MESSAGE) else {
                        let head = self.held.trim_start();
                        // A header opens with `<|start|>`, a channel, or (after the prompt's
                        // `<|start|>assistant`) a recipient.
                        let headerish =
                            [START, CHANNEL, CALL_RECIPIENT.trim_start()].iter().any(|m| head.starts_with(m) || m.starts_with(head));
                        if !headerish || self.held.len() > MAX_HEADER {
                            self.state = State::Plain;
                            continue;
                        }
                        return out;
                    };
                    let header: String = self.held.drain(..at + MESSAGE.len()).collect();
                    let body = self.open(&header[..at], &mut out);
                    if body == Body::Verbatim {
                        out.push_str(&header);
                    }
                    self.state = State::Body(body);
                }
                State::Body(body) => {
                    let end = BODY_ENDS.iter().filter_map(|m| self.held.find(m).map(|at| (at, *m))).min();
                    let Some((at, marker)) = end else {
                        let keep = BODY_ENDS.iter().map(|m| partial_tag_len(&self.held, m)).max().unwrap_or(0);
                        let said: String = self.held.drain(..self.held.len() - keep).collect();
                        self.say(body, &said, &mut out);
                        return out;
                    };
                    let said: String = self.held.drain(..at).collect();
                    self.say(body, &said, &mut out);
                    self.end_call(&mut out);
                    // A `<|start|>` opens the next header; the others end this message.
                    if marker != START {
                        self.held.drain(..marker.len());
                        if body == Body::Verbatim {
                            out.push_str(marker);
                        }
                    }
                    if body == Body::Analysis && std::mem::take(&mut self.thinking) {
                        out.push_str(THINK_CLOSE);
                    }
                    self.state = State::Header;
                }
            }
        }
    }

    /// Whether everything pushed so far is in the text given back: nothing is held (a marker
    /// or a header in hand, a call's arguments).
    pub fn is_settled(&self) -> bool {
        self.held.is_empty() && self.call.is_none()
    }

    /// What is still held back once the reply has ended: a half marker is text after all, a
    /// half header is not.
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.held);
        let mut out = String::new();
        match self.state {
            State::Header => {}
            State::Body(body) => self.say(body, &held, &mut out),
            State::Plain => out = held,
        }
        // A call ends the turn with `<|call|>`, which llama.cpp stops on: the call is whole.
        self.end_call(&mut out);
        out
    }

    fn say(&mut self, body: Body, text: &str, out: &mut String) {
        match (body, &mut self.call) {
            (Body::Call, Some((_, arguments))) => arguments.push_str(text),
            _ => out.push_str(text),
        }
    }

    /// Writes the call in hand as Hearth's call block.
    fn end_call(&mut self, out: &mut String) {
        if let Some((name, arguments)) = self.call.take() {
            out.push_str(&call_block(&name, arguments.trim()));
        }
    }

    /// Opens the message whose header is `header` (`<|start|>assistant<|channel|>final`,
    /// `<|channel|>analysis`, `… to=functions.x<|channel|>commentary json`).
    fn open(&mut self, header: &str, out: &mut String) -> Body {
        let channel = header.split(CHANNEL).nth(1).and_then(|rest| rest.split_whitespace().next()).unwrap_or("");
        if let Some(name) = called_function(header) {
            self.reasoned = true;
            self.call = Some((name.to_owned(), String::new()));
            return Body::Call;
        }
        if header.contains(" to=") {
            return Body::Verbatim;
        }
        if channel == "analysis" && !self.reasoned {
            out.push_str(THINK_OPEN);
            (self.thinking, self.reasoned) = (true, true);
            return Body::Analysis;
        }
        // A final answer before any reasoning: the reply has none, and never opens it later.
        self.reasoned = true;
        Body::Answer
    }
}

/// The function a message's header sends it to (`… to=functions.get_weather<|channel|>…`, or
/// `<|channel|>commentary to=functions.get_weather <|constrain|>json`).
fn called_function(header: &str) -> Option<&str> {
    let rest = &header[header.find(CALL_RECIPIENT)? + CALL_RECIPIENT.len()..];
    let name = &rest[..rest.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(rest.len())];
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (what gpt-oss writes after `<|start|>assistant`, the reply Hearth stores)
    const CASES: &[(&str, &str)] = &[
        (
            "<|channel|>analysis<|message|>User asks 2+2. Easy.<|end|><|start|>assistant<|channel|>final<|message|>Four.",
            "<think>User asks 2+2. Easy.</think>Four.",
        ),
        ("<|channel|>final<|message|>Just the answer.", "Just the answer."),
        ("<|channel|>analysis<|message|>Cut off while thin", "<think>Cut off while thin"),
        ("Plain text, no channels <|end|> at all.", "Plain text, no channels <|end|> at all."),
        // A preamble to the user, then the answer: both the answer's.
        (
            "<|channel|>analysis<|message|>Plan.<|end|><|start|>assistant<|channel|>commentary<|message|>Let me check. <|end|><|start|>assistant<|channel|>final<|message|>Done.",
            "<think>Plan.</think>Let me check. Done.",
        ),
        // A call to a function offered, in either place the recipient goes: Hearth's call block.
        (
            "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Oslo\"}<|call|>",
            "<think>Need weather.</think><tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}}\n</tool_call>",
        ),
        (
            "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|> {} ",
            "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{}}\n</tool_call>",
        ),
        (
            " to=functions.get_time<|channel|>commentary json<|message|>{}",
            "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{}}\n</tool_call>",
        ),
        ("to be or not to be", "to be or not to be"),
        // A message to a tool Hearth did not offer is kept as written.
        (
            "<|channel|>analysis<|message|>Search.<|end|><|start|>assistant to=browser.search<|channel|>commentary json<|message|>{\"q\":\"x\"}<|call|>",
            "<think>Search.</think><|start|>assistant to=browser.search<|channel|>commentary json<|message|>{\"q\":\"x\"}<|call|>",
        ),
        // The budget's closing, written for the model, reads as the model's own.
        ("<|channel|>analysis<|message|>Hmm<|end|><|start|>assistant<|channel|>final<|message|>Yes", "<think>Hmm</think>Yes"),
        ("<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>Yes", "<think></think>Yes"),
        // A marker's half is text when the reply ends on it.
        ("<|channel|>final<|message|>a <|en", "a <|en"),
    ];

    fn streamed(text: &str, n: usize) -> String {
        let mut stream = HarmonyStream::new();
        let chars: Vec<char> = text.chars().collect();
        let mut out: String = chars.chunks(n).map(|piece| stream.push(&piece.iter().collect::<String>())).collect();
        out.push_str(&stream.finish());
        out
    }

    #[test]
    fn channels_become_a_leading_reasoning_block_in_any_pieces() {
        for (written, stored) in CASES {
            for n in [1, 2, 3, 5, 8, 13, 1000] {
                assert_eq!(streamed(written, n), *stored, "{written:?} in pieces of {n}");
            }
        }
    }

    #[test]
    fn no_piece_of_a_marker_is_shown_while_it_is_written() {
        let mut stream = HarmonyStream::new();
        assert_eq!(stream.push("<|chan"), "");
        assert_eq!(stream.push("nel|>analysis<|mess"), "");
        assert_eq!(stream.push("age|>Hmm <|e"), "<think>Hmm ");
        assert_eq!(stream.push("nd|><|start|>assistant"), "</think>");
        assert_eq!(stream.push("<|channel|>final<|message|>Yes"), "Yes");
    }

    #[test]
    fn a_stored_reply_goes_back_to_the_channels_it_came_from() {
        for (written, stored) in CASES.iter().take(3) {
            assert_eq!(to_harmony(stored), *written);
            assert_eq!(streamed(&to_harmony(stored), 4), *stored);
        }
    }

    #[test]
    fn a_reply_continued_goes_on_where_it_was() {
        for (written, delta, more) in [
            ("<think>Half a thou", "ght<|end|><|start|>assistant<|channel|>final<|message|>Yes", "ght</think>Yes"),
            ("<think>Done</think>Half an ans", "wer.", "wer."),
            ("Plain", " text<|end|>", " text"),
        ] {
            let mut stream = HarmonyStream::continuing(Some(written));
            assert_eq!(stream.push(delta) + &stream.finish(), more, "{written:?}");
        }
    }

    #[test]
    fn a_budget_becomes_gpt_oss_reasoning_effort() {
        let efforts: Vec<_> = [-1, 0, 100, 5000, 20000].into_iter().map(harmony_effort).collect();
        assert_eq!(efforts, [None, Some("low"), Some("low"), Some("medium"), Some("high")]);
    }
}
