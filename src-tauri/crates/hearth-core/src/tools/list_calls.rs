//! Calls a model family writes as a JSON list after a marker, each call an object naming the
//! function, its arguments and an id: Mistral Nemo's (and Mistral 7B v0.3's)
//! `[TOOL_CALLS][{"name": "…", "arguments": {…}, "id": "…"}, …]`, Command R7B's
//! `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "…", "parameters": {…}}, …]<|END_ACTION|>`.
//! Read into Hearth's call blocks one call at a time, as each object closes; the ids are dropped
//! (the template is given ids Hearth numbers itself, which the engine's grammar makes the model
//! write: [`ListSyntax::id_of`]).

use serde_json::Value;

use super::call_block;
use super::named_calls::ObjectScan;
use crate::reasoning::partial_tag_len;

/// How a family writes a turn's calls as a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListSyntax {
    /// Before the list, and after it (empty: nothing closes it).
    pub open: &'static str,
    pub close: &'static str,
    /// The list as the family's template writes it back: its opening, what is between two
    /// calls, its end.
    pub layout: [&'static str; 3],
    /// The members naming the function, holding its arguments, and the call's id.
    pub name: &'static str,
    pub arguments: &'static str,
    pub id: &'static str,
    /// Whether a call's id is its first member (else its last).
    pub id_first: bool,
    pub ids: CallNumbering,
}

/// How a family's template numbers a conversation's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallNumbering {
    /// Nine letters and digits ([`call_id`]), as Mistral's templates require.
    Mistral,
    /// The call's number in the conversation, from 0, as Command R7B's template counts them.
    Counted,
}

/// Mistral Nemo's: `[TOOL_CALLS]` then the list.
pub const MISTRAL_NEMO_CALLS: ListSyntax = ListSyntax {
    open: "[TOOL_CALLS]",
    close: "",
    layout: ["[", ", ", "]"],
    name: "name",
    arguments: "arguments",
    id: "id",
    id_first: false,
    ids: CallNumbering::Mistral,
};

/// Command R7B's: the list between `<|START_ACTION|>` and `<|END_ACTION|>`, a call a line.
pub const COMMAND_R_CALLS: ListSyntax = ListSyntax {
    open: "<|START_ACTION|>",
    close: "<|END_ACTION|>",
    layout: ["[\n    ", ",\n    ", "\n]"],
    name: "tool_name",
    arguments: "parameters",
    id: "tool_call_id",
    id_first: true,
    ids: CallNumbering::Counted,
};

impl ListSyntax {
    /// The id of the conversation's `n`th call (from 0), as the family's template writes it.
    pub fn id_of(&self, n: usize) -> String {
        match self.ids {
            CallNumbering::Mistral => call_id(n),
            CallNumbering::Counted => n.to_string(),
        }
    }
}

/// The id of the `n`th call of a conversation (from 0): nine letters and digits, as Mistral's
/// templates require.
pub fn call_id(n: usize) -> String {
    format!("call{:05}", n % 100_000)
}

/// The longest call object read before the text is given up as no call.
const MAX_CALL: usize = 1 << 20;

/// Turns a model's streamed text into Hearth's text: each call of a list in `syntax` becomes a
/// call block once its object closes; the rest passes as it came (a partial opening held back).
#[derive(Debug)]
pub struct ListCallStream {
    syntax: ListSyntax,
    /// Text held back: a partial opening, or what came since the opening or the last call read.
    held: String,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Text; `held` may be the start of the opening.
    Text,
    /// After the opening, before the list's `[`.
    BeforeList,
    /// In the list, between calls (`expect_call`: after `[` or a comma).
    Between { expect_call: bool },
    /// Inside a call's object, which starts at `start` in `held`.
    Call { depth: ObjectScan, start: usize },
    /// After the list, before its closing marker (`held` may be the start of it).
    AfterList,
}

impl ListCallStream {
    pub fn new(syntax: ListSyntax) -> ListCallStream {
        ListCallStream { syntax, held: String::new(), state: State::Text }
    }

    /// The reply's text for `delta`, read a character at a time.
    pub fn push(&mut self, delta: &str) -> String {
        delta.chars().fold(String::new(), |mut out, c| {
            self.held.push(c);
            self.read(c, &mut out);
            out
        })
    }

    /// What is still held back once the reply has ended: a call cut off is text.
    pub fn finish(&mut self) -> String {
        if std::mem::replace(&mut self.state, State::Text) == State::AfterList {
            self.held.clear(); // Space, or the closing marker cut off: the list's.
        }
        std::mem::take(&mut self.held)
    }

    /// Reads `c`, the last character of `held`.
    fn read(&mut self, c: char, out: &mut String) {
        let open = self.syntax.open;
        self.state = match self.state {
            State::Text if self.held.ends_with(open) => {
                out.extend(self.held.drain(..self.held.len() - open.len()));
                State::BeforeList
            }
            State::Text => {
                let keep = partial_tag_len(&self.held, open);
                out.extend(self.held.drain(..self.held.len() - keep));
                State::Text
            }
            State::BeforeList | State::Between { .. } if c.is_whitespace() => self.state,
            State::BeforeList if c == '[' => State::Between { expect_call: true },
            State::Between { expect_call: true } if c == '{' => State::Call { depth: ObjectScan::opened(), start: self.held.len() - 1 },
            State::Between { expect_call: false } if c == ',' => State::Between { expect_call: true },
            State::Between { expect_call: false } if c == ']' => {
                self.held.clear(); // The list's markers: dropped (its calls are blocks now).
                if self.syntax.close.is_empty() { State::Text } else { State::AfterList }
            }
            State::AfterList => {
                let close = self.syntax.close;
                match self.held.trim_start() {
                    marker if marker == close => {
                        self.held.clear();
                        State::Text
                    }
                    marker if close.starts_with(marker) => State::AfterList,
                    _ => self.give_up(out), // No closing marker: what came after the list is text.
                }
            }
            State::Call { mut depth, start } => match depth.read(c) {
                false if self.held.len() - start > MAX_CALL => self.give_up(out),
                false => State::Call { depth, start },
                true => match self.call_of(&self.held[start..]) {
                    Some(block) => {
                        out.push_str(&block);
                        self.held.clear();
                        State::Between { expect_call: false }
                    }
                    None => self.give_up(out),
                },
            },
            // Not a list of calls after all: what came is text.
            State::BeforeList | State::Between { .. } => self.give_up(out),
        };
    }

    /// What is held is no call: it passes as text.
    fn give_up(&mut self, out: &mut String) -> State {
        out.push_str(&std::mem::take(&mut self.held));
        State::Text
    }

    /// The call block of one of the list's objects: its name, and its arguments as written.
    fn call_of(&self, object: &str) -> Option<String> {
        let members = members(object)?;
        let member = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, raw)| *raw);
        let name = serde_json::from_str::<String>(member(self.syntax.name)?).ok()?;
        let arguments = member(self.syntax.arguments)?;
        serde_json::from_str::<Value>(arguments).ok()?.is_object().then(|| call_block(&name, arguments))
    }
}

/// The members of a JSON object's text, each value as it is written.
fn members(object: &str) -> Option<Vec<(String, &str)>> {
    let skip_space = |at: usize| at + object[at..].len() - object[at..].trim_start().len();
    let mut at = skip_space(object.strip_prefix('{').map(|_| 1)?);
    let mut members = Vec::new();
    if object[at..].starts_with('}') {
        return Some(members);
    }
    loop {
        let (key, end) = next_value::<String>(object, at)?;
        at = skip_space(end);
        at = skip_space(at + object[at..].strip_prefix(':').map(|_| 1)?);
        let (_, end) = next_value::<Value>(object, at)?;
        members.push((key, &object[at..end]));
        at = skip_space(end);
        match object[at..].chars().next()? {
            ',' => at = skip_space(at + 1),
            '}' => return Some(members),
            _ => return None,
        }
    }
}

/// The JSON value at `at` in `text`, and where it ends.
fn next_value<T: serde::de::DeserializeOwned>(text: &str, at: usize) -> Option<(T, usize)> {
    let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, at + values.byte_offset()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(text: &str, size: usize) -> String {
        streamed_in(MISTRAL_NEMO_CALLS, text, size)
    }

    fn streamed_in(syntax: ListSyntax, text: &str, size: usize) -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut stream = ListCallStream::new(syntax);
        let mut out: String = chars.chunks(size).map(|piece| stream.push(&piece.iter().collect::<String>())).collect();
        out.push_str(&stream.finish());
        out
    }

    #[test]
    fn a_list_of_calls_becomes_blocks_and_the_rest_passes_in_any_pieces() {
        let weather = call_block("get_weather", r#"{"city": "Paris", "days": [1, 2]}"#);
        let time = call_block("get_time", "{}");
        let cases = [
            (
                r#"[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}, "id": "call00000"}]"#,
                weather.clone(),
            ),
            (
                r#"Let me look.[TOOL_CALLS] [ {"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}, "id": "call00000"}, {"id": "call00001", "name": "get_time", "arguments": {}} ]"#,
                format!("Let me look.{weather}{time}"),
            ),
            // Braces and quotes inside the arguments' strings are the arguments'.
            (
                r#"[TOOL_CALLS][{"name": "say", "arguments": {"text": "a } \" ] {"}, "id": "call00000"}]"#,
                call_block("say", r#"{"text": "a } \" ] {"}"#),
            ),
            // No list, a call with no name or arguments that are no object: text.
            ("[TOOL_CALLS] in words", "[TOOL_CALLS] in words".into()),
            (r#"[TOOL_CALLS][{"arguments": {}}]"#, r#"[TOOL_CALLS][{"arguments": {}}]"#.into()),
            (r#"[TOOL_CALLS] [{"name": "f", "arguments": 3}]"#, r#"[TOOL_CALLS] [{"name": "f", "arguments": 3}]"#.into()),
            // A call, then no more list: the call is read, the rest is text.
            (r#"[TOOL_CALLS][{"name": "get_time", "arguments": {}, "id": "call00001"}, oops"#, format!("{time}, oops")),
            ("[TOOL", "[TOOL".into()),
            ("No call [at] all.", "No call [at] all.".into()),
        ];
        for (text, expected) in cases {
            for size in [1, 2, 5, 1000] {
                assert_eq!(streamed(text, size), expected, "{text:?} in pieces of {size}");
            }
        }
    }

    #[test]
    fn command_r_lists_close_with_their_marker_which_is_dropped() {
        let weather = call_block("get_weather", r#"{"city": "Paris"}"#);
        let time = call_block("get_time", "{}");
        let cases = [
            (
                "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n]<|END_ACTION|>",
                weather.clone(),
            ),
            (
                "<|START_ACTION|>[\n    {\"tool_call_id\": \"3\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}},\n    {\"tool_call_id\": \"4\", \"tool_name\": \"get_time\", \"parameters\": {}}\n]<|END_ACTION|>",
                format!("{weather}{time}"),
            ),
            // The reply ends before the closing marker: the calls are read all the same.
            ("<|START_ACTION|>[{\"tool_name\": \"get_time\", \"parameters\": {}}] <|END_AC", time.clone()),
            // Words after the list and no closing marker: they are text.
            ("<|START_ACTION|>[{\"tool_name\": \"get_time\", \"parameters\": {}}] and more", format!("{time} and more")),
            // Nemo's members are no call here.
            (
                "<|START_ACTION|>[{\"name\": \"get_time\", \"arguments\": {}}]",
                "<|START_ACTION|>[{\"name\": \"get_time\", \"arguments\": {}}]".into(),
            ),
        ];
        for (text, expected) in cases {
            for size in [1, 3, 1000] {
                assert_eq!(streamed_in(COMMAND_R_CALLS, text, size), expected, "{text:?} in pieces of {size}");
            }
        }
    }

    #[test]
    fn each_family_numbers_calls_its_way() {
        assert_eq!((MISTRAL_NEMO_CALLS.id_of(12), COMMAND_R_CALLS.id_of(12)), (call_id(12), "12".to_owned()));
    }

    #[test]
    fn ids_are_nine_letters_and_digits() {
        for n in [0, 7, 99_999] {
            let id = call_id(n);
            assert!(id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()), "{id}");
        }
        assert_ne!(call_id(1), call_id(2));
    }
}
