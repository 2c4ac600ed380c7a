//! Calls a model family writes as a JSON list after a marker, each call an object naming the
//! function, its arguments and an id: Mistral Nemo's (and Mistral 7B v0.3's)
//! `[TOOL_CALLS][{"name": "…", "arguments": {…}, "id": "…"}, …]`. Read into Hearth's call blocks
//! one call at a time, as each object closes; the ids are dropped (the template is given ids
//! Hearth numbers itself, [`call_id`], which the engine's grammar makes the model write).

use serde_json::Value;

use super::call_block;
use super::named_calls::ObjectScan;
use crate::reasoning::partial_tag_len;

/// How a family writes a turn's calls as a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListSyntax {
    /// Before the list.
    pub open: &'static str,
    /// The members naming the function, holding its arguments, and the call's id.
    pub name: &'static str,
    pub arguments: &'static str,
    pub id: &'static str,
}

/// Mistral Nemo's: `[TOOL_CALLS]` then the list.
pub const MISTRAL_NEMO_CALLS: ListSyntax = ListSyntax { open: "[TOOL_CALLS]", name: "name", arguments: "arguments", id: "id" };

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
        self.state = State::Text;
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
                State::Text
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
        let chars: Vec<char> = text.chars().collect();
        let mut stream = ListCallStream::new(MISTRAL_NEMO_CALLS);
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
    fn ids_are_nine_letters_and_digits() {
        for n in [0, 7, 99_999] {
            let id = call_id(n);
            assert!(id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()), "{id}");
        }
        assert_ne!(call_id(1), call_id(2));
    }
}
