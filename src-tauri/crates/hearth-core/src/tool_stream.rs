//! A streamed reply read for calls as they are written: its text, then each call as it opens (its
//! name) and its arguments as they come — what OpenAI's streamed `tool_calls` deltas carry.
//!
//! A local model writes calls in `call_block`'s layout (the engine's grammar keeps it to it), so
//! a block is read as it grows: `<tool_call>\n{"name":` + the name + `,"arguments":` + the
//! arguments + `}\n</tool_call>`. A JSON text holds no raw line break, so the arguments end only
//! where that closing does. A block in another layout is read whole when the reply ends.

use serde_json::Value;

use crate::tools::{CALL_CLOSE, CALL_OPEN, read_calls, shown_text_len};

/// What a stretch of a streamed reply is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallEvent {
    /// Text to show.
    Text(String),
    /// Call `index` (0 for a reply's first) opened: the tool's name.
    Opened { index: usize, name: String },
    /// More of call `index`'s arguments, JSON text as written.
    Arguments { index: usize, fragment: String },
}

/// Reads a reply's text as it streams. Text after the first call is said only at the end (and
/// only if it is more than the space between calls).
#[derive(Debug, Default)]
pub struct CallStream {
    text: String,
    /// Where the text not yet read starts.
    read: usize,
    /// The block being written: where its arguments start, and how much of them went out.
    block: Option<Block>,
    calls: usize,
    /// A block not in `call_block`'s layout: the rest is read whole at the end.
    irregular: bool,
}

#[derive(Debug)]
struct Block {
    index: usize,
    arguments_at: usize,
    sent: usize,
}

const NAME_OPENING: &str = "{\"name\":";
const ARGUMENTS_OPENING: &str = ",\"arguments\":";

impl CallStream {
    pub fn new() -> CallStream {
        CallStream::default()
    }

    /// The events `delta` completes.
    pub fn push(&mut self, delta: &str) -> Vec<CallEvent> {
        self.text.push_str(delta);
        let mut events = Vec::new();
        while !self.irregular && self.step(&mut events) {}
        events
    }

    /// The reply ended: what is left, and how many calls it held in all.
    pub fn finish(mut self) -> (Vec<CallEvent>, usize) {
        let mut events = Vec::new();
        while !self.irregular && self.step(&mut events) {}
        let rest = &self.text[self.read..];
        if self.block.is_some() || rest.is_empty() {
            // A block cut off as it was written: what it had went out already.
            return (events, self.calls);
        }
        let read = read_calls(rest);
        let before = self.calls;
        for (i, call) in read.calls.into_iter().enumerate() {
            let index = before + i;
            events.push(CallEvent::Opened { index, name: call.name });
            events.push(CallEvent::Arguments { index, fragment: call.arguments });
            self.calls += 1;
        }
        // Text: before any call, as written; after one, only if it says something.
        let text = if before == 0 && self.calls == 0 { rest.to_owned() } else { read.content };
        if !text.trim().is_empty() || (self.calls == 0 && !text.is_empty()) {
            events.insert(0, CallEvent::Text(text));
        }
        (events, self.calls)
    }

    /// Reads what it can; false when it needs more text.
    fn step(&mut self, events: &mut Vec<CallEvent>) -> bool {
        let rest = &self.text[self.read..];
        let Some(block) = &mut self.block else {
            if self.calls > 0 {
                // Between calls: the next block, or text kept for the end.
                let Some(open) = rest.find(CALL_OPEN) else { return false };
                if !rest[..open].trim().is_empty() {
                    self.irregular = true;
                    return false;
                }
                self.read += open;
                return self.open_block(events);
            }
            let shown = shown_text_len(rest);
            if shown > 0 {
                events.push(CallEvent::Text(rest[..shown].to_owned()));
                self.read += shown;
                return true;
            }
            return rest.starts_with(CALL_OPEN) && self.open_block(events);
        };
        let arguments = &self.text[block.arguments_at..];
        let closing = format!("}}\n{CALL_CLOSE}");
        let (end, done) = match arguments.find(&closing) {
            Some(at) => (at, true),
            // Held back: what may be the start of the closing.
            None => (
                (1..closing.len()).rev().find(|&n| arguments.ends_with(&closing[..n])).map_or(arguments.len(), |n| arguments.len() - n),
                false,
            ),
        };
        if end > block.sent {
            events.push(CallEvent::Arguments { index: block.index, fragment: arguments[block.sent..end].to_owned() });
            block.sent = end;
        }
        if done {
            self.read = block.arguments_at + end + closing.len();
            self.block = None;
            return true;
        }
        false
    }

    /// At a block's opening: its name once written; false when it needs more text.
    fn open_block(&mut self, events: &mut Vec<CallEvent>) -> bool {
        let rest = &self.text[self.read..];
        let opening = format!("{CALL_OPEN}\n{NAME_OPENING}");
        if rest.len() < opening.len() {
            self.irregular |= !opening.starts_with(rest);
            return false;
        }
        if !rest.starts_with(&opening) {
            self.irregular = true;
            return false;
        }
        let after = &rest[opening.len()..];
        let mut values = serde_json::Deserializer::from_str(after).into_iter::<Value>();
        let name = match values.next() {
            Some(Ok(Value::String(name))) => name,
            Some(Err(e)) if e.is_eof() => return false,
            None => return false,
            _ => {
                self.irregular = true;
                return false;
            }
        };
        let past_name = &after[values.byte_offset()..];
        if past_name.len() < ARGUMENTS_OPENING.len() {
            self.irregular |= !ARGUMENTS_OPENING.starts_with(past_name);
            return false;
        }
        if !past_name.starts_with(ARGUMENTS_OPENING) {
            self.irregular = true;
            return false;
        }
        let arguments_at = self.text.len() - past_name.len() + ARGUMENTS_OPENING.len();
        let index = self.calls;
        self.calls += 1;
        events.push(CallEvent::Opened { index, name });
        self.block = Some(Block { index, arguments_at, sent: 0 });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call_block;

    /// `text` streamed in pieces of `size` bytes (at char boundaries): the events, merged.
    fn streamed(text: &str, size: usize) -> (Vec<CallEvent>, usize) {
        let mut stream = CallStream::new();
        let mut events = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let mut end = (at + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            events.extend(stream.push(&text[at..end]));
            at = end;
        }
        let (rest, calls) = stream.finish();
        events.extend(rest);
        (merge(events), calls)
    }

    /// Neighbouring text, and neighbouring fragments of one call, as one event.
    fn merge(events: Vec<CallEvent>) -> Vec<CallEvent> {
        let mut out: Vec<CallEvent> = Vec::new();
        for event in events {
            match (out.last_mut(), event) {
                (Some(CallEvent::Text(a)), CallEvent::Text(b)) => a.push_str(&b),
                (Some(CallEvent::Arguments { index: i, fragment: a }), CallEvent::Arguments { index: j, fragment: b }) if *i == j => {
                    a.push_str(&b)
                }
                (_, event) => out.push(event),
            }
        }
        out
    }

    fn text(t: &str) -> CallEvent {
        CallEvent::Text(t.into())
    }
    fn opened(index: usize, name: &str) -> CallEvent {
        CallEvent::Opened { index, name: name.into() }
    }
    fn arguments(index: usize, fragment: &str) -> CallEvent {
        CallEvent::Arguments { index, fragment: fragment.into() }
    }

    #[test]
    fn calls_are_read_as_they_are_written_whatever_the_pieces() {
        let weather = call_block("get_weather", r#"{"city":"Paris","unit":"celsius"}"#);
        let time = call_block("get_time", "{}");
        let cases: Vec<(String, Vec<CallEvent>, usize)> = vec![
            ("Just text, a < b.".into(), vec![text("Just text, a < b.")], 0),
            (weather.clone(), vec![opened(0, "get_weather"), arguments(0, r#"{"city":"Paris","unit":"celsius"}"#)], 1),
            (
                format!("{weather}\n{time}"),
                vec![
                    opened(0, "get_weather"),
                    arguments(0, r#"{"city":"Paris","unit":"celsius"}"#),
                    opened(1, "get_time"),
                    arguments(1, "{}"),
                ],
                2,
            ),
            (
                format!("Let me look. {weather}"),
                vec![text("Let me look. "), opened(0, "get_weather"), arguments(0, r#"{"city":"Paris","unit":"celsius"}"#)],
                1,
            ),
            // Arguments that hold a brace, a quote and the closing's look-alike, escaped.
            (
                call_block("say", r#"{"text":"}\n<\/tool_call> \"ok\" ✓"}"#),
                vec![opened(0, "say"), arguments(0, r#"{"text":"}\n<\/tool_call> \"ok\" ✓"}"#)],
                1,
            ),
            // Cut off inside the arguments: what came went out; one call.
            (weather[..weather.len() - 20].to_owned(), vec![opened(0, "get_weather"), arguments(0, r#"{"city":"Paris","unit":"cel"#)], 1),
            // Another layout: read whole at the end.
            (
                "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>".into(),
                vec![opened(0, "get_time"), arguments(0, "{}")],
                1,
            ),
            // Text after a call: said at the end when it says something.
            (
                format!("{weather}\nDone."),
                vec![opened(0, "get_weather"), arguments(0, r#"{"city":"Paris","unit":"celsius"}"#), text("Done.")],
                1,
            ),
            ("<tool_call> not a call".into(), vec![text("<tool_call> not a call")], 0),
        ];
        for (reply, expected, calls) in cases {
            for size in [1, 2, 3, 7, 64, 4096] {
                assert_eq!(streamed(&reply, size), (expected.clone(), calls), "{reply:?} in pieces of {size}");
            }
        }
    }
}
