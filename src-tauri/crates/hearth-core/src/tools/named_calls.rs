//! Calls a model family writes as an opening, the function's name, a separator and the arguments'
//! JSON object (and maybe a closing), maybe all of a turn's calls between two markers: Llama
//! 3.x's `{"name": "NAME", "parameters": {…}}`, Mistral's `[TOOL_CALLS]NAME[ARGS]{…}`,
//! Functionary's `<function=NAME>{…}</function>`, DeepSeek's `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…
//! <｜tool▁calls▁end｜>`. Read into Hearth's call blocks as the model writes them — the arguments
//! as they come, so a call streams as any model's — and the rest of Hearth reads them as any
//! model's.

use super::{call_block_end, call_block_start};
use crate::reasoning::partial_tag_len;

/// How a family writes one call around its name and its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSyntax {
    pub open: &'static str,
    /// Between the name and the arguments' object.
    pub between: &'static str,
    /// After the object (nothing, for Mistral).
    pub close: &'static str,
    /// Before a turn's calls, and after them (nothing, for most families): dropped.
    pub around: (&'static str, &'static str),
}

impl CallSyntax {
    /// The syntax's markers, each written once or more in a turn's calls.
    pub fn markers(&self) -> impl Iterator<Item = &'static str> {
        [self.open, self.between, self.close, self.around.0, self.around.1].into_iter().filter(|m| !m.is_empty())
    }

    /// What the model writes first to call (what binds a lazy grammar).
    pub fn first(&self) -> &'static str {
        if self.around.0.is_empty() { self.open } else { self.around.0 }
    }
}

/// Llama 3.x's call, the turn's whole text, as its template writes one back.
pub const LLAMA3_CALLS: CallSyntax = CallSyntax { open: "{\"name\": \"", between: "\", \"parameters\": ", close: "}", around: NOTHING };
/// Mistral's (Mistral Small 3.2, Magistral, Devstral): one after another, each after its marker.
pub const MISTRAL_CALLS: CallSyntax = CallSyntax { open: "[TOOL_CALLS]", between: "[ARGS]", close: "", around: NOTHING };
/// Functionary v3.1's (and Llama 3.1's custom tools'): one after another.
pub const FUNCTIONARY_CALLS: CallSyntax = CallSyntax { open: "<function=", between: ">", close: "</function>", around: NOTHING };
/// DeepSeek V3.1's and V3.2's: the name, then the arguments, between the calls' markers.
pub const DEEPSEEK_CALLS: CallSyntax =
    CallSyntax {
        open: "<｜tool▁call▁begin｜>", between: "<｜tool▁sep｜>", close: "<｜tool▁call▁end｜>", around: DEEPSEEK_AROUND
    };
/// DeepSeek R1's (0528) and V3's (0324): the call's type, the name, then the arguments in a
/// fenced JSON block.
pub const DEEPSEEK_R1_CALLS: CallSyntax = CallSyntax {
    open: "<｜tool▁call▁begin｜>function<｜tool▁sep｜>",
    between: "\n```json\n",
    close: "\n```<｜tool▁call▁end｜>",
    around: DEEPSEEK_AROUND,
};
const DEEPSEEK_AROUND: (&str, &str) = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>");
const NOTHING: (&str, &str) = ("", "");

/// The longest name read before the text is given up as no call (and the most room before the
/// arguments' object).
const MAX_NAME: usize = 128;

/// Turns a model's streamed text into Hearth's text, piece by piece: each call in `syntax`
/// becomes a call block, written once its name is known and its arguments' object opens, its
/// arguments passed on as they come; the rest passes as it came. What may yet be a call's
/// opening or name is held back until it is known. (The engine's grammar binds from the opening
/// on, so a call that opens is whole, but for a reply cut off by its length.)
#[derive(Debug)]
pub struct NamedCallStream {
    syntax: CallSyntax,
    /// Text held back: a partial opening, a call's opening and name, or a partial closing.
    held: String,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Text; `held` may be the start of an opening.
    Text,
    /// After the opening: the name, up to the separator.
    Name,
    /// After the separator, before the arguments' object (`name_end`: where the name ended in
    /// `held`).
    BeforeObject { name_end: usize },
    /// Inside the arguments' object, its block written up to here.
    Arguments(ObjectScan),
    /// After the object and its block: the syntax's closing, if any, read and dropped.
    Close,
}

/// Where a scan of a JSON object stands: how deep its braces are, and whether in a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ObjectScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl ObjectScan {
    /// A scan just past the object's opening brace.
    pub(super) fn opened() -> ObjectScan {
        ObjectScan { depth: 1, in_string: false, escaped: false }
    }

    /// Reads `c`; true when it closes the object.
    pub(super) fn read(&mut self, c: char) -> bool {
        match (self.in_string, self.escaped, c) {
            (true, true, _) => self.escaped = false,
            (true, false, '\\') => self.escaped = true,
            (true, false, '"') => self.in_string = false,
            (true, ..) => {}
            (false, _, '"') => self.in_string = true,
            (false, _, '{' | '[') => self.depth += 1,
            (false, _, '}' | ']') => {
                self.depth = self.depth.saturating_sub(1);
                return self.depth == 0;
            }
            _ => {}
        }
        false
    }
}

impl NamedCallStream {
    pub fn new(syntax: CallSyntax) -> NamedCallStream {
        NamedCallStream { syntax, held: String::new(), state: State::Text }
    }

    /// The reply's text for `delta`.
    pub fn push(&mut self, delta: &str) -> String {
        let mut out = String::new();
        for c in delta.chars() {
            self.held.push(c);
            self.read(c, &mut out);
        }
        out
    }

    /// What is still held back once the reply has ended: an opening or a name with no call after
    /// it is text; a call cut off inside its arguments stays an open block, as any model's.
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.held);
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text | State::Name | State::BeforeObject { .. } => held,
            State::Arguments(_) | State::Close => String::new(),
        }
    }

    /// Reads `c`, the last character of `held`.
    fn read(&mut self, c: char, out: &mut String) {
        let CallSyntax { open, between, close, around } = self.syntax;
        match self.state {
            State::Text if self.held.ends_with(open) => {
                out.extend(self.held.drain(..self.held.len() - open.len()));
                self.state = State::Name;
            }
            State::Text => match [around.0, around.1].into_iter().find(|m| !m.is_empty() && self.held.ends_with(m)) {
                // The markers around the calls: dropped (the calls are blocks of their own).
                Some(marker) => {
                    out.extend(self.held.drain(..self.held.len() - marker.len()));
                    self.held.clear();
                }
                None => {
                    let openings = [open, around.0, around.1].into_iter().filter(|m| !m.is_empty());
                    let keep = openings.map(|m| partial_tag_len(&self.held, m)).max().unwrap_or(0);
                    out.extend(self.held.drain(..self.held.len() - keep));
                }
            },
            State::Name if self.held.ends_with(between) && self.held.len() >= open.len() + between.len() => {
                let name_end = self.held.len() - between.len();
                match is_name(&self.held[open.len()..name_end]) {
                    true => self.state = State::BeforeObject { name_end },
                    false => self.give_up(out),
                }
            }
            State::Name => {
                // A name, then what may be the start of the separator.
                let name = &self.held[open.len()..];
                let other = name.find(|c| !is_name_char(c)).unwrap_or(name.len());
                if other > MAX_NAME || !between.starts_with(&name[other..]) {
                    self.give_up(out);
                }
            }
            State::BeforeObject { name_end } => match c {
                '{' => {
                    out.push_str(&call_block_start(&self.held[open.len()..name_end]));
                    out.push('{');
                    self.held.clear();
                    self.state = State::Arguments(ObjectScan::opened());
                }
                c if c.is_whitespace() && self.held.len() - name_end <= MAX_NAME => {}
                _ => self.give_up(out), // The arguments are no object: no call.
            },
            State::Arguments(mut scan) => {
                out.push(c);
                self.held.clear();
                self.state = match scan.read(c) {
                    false => State::Arguments(scan),
                    true => {
                        out.push_str(&call_block_end());
                        State::Close
                    }
                };
                if self.state == State::Close && close.is_empty() {
                    self.state = State::Text;
                }
            }
            State::Close if self.held == close => {
                self.held.clear();
                self.state = State::Text;
            }
            State::Close if close.starts_with(self.held.as_str()) => {}
            State::Close => {
                // Not the closing after all: what came is text, read for the next opening.
                self.state = State::Text;
                let came = std::mem::take(&mut self.held);
                self.reread(&came, out);
            }
        }
    }

    /// What is held is no call: its opening is text, and what followed is read again as text
    /// (it may hold the next opening).
    fn give_up(&mut self, out: &mut String) {
        let rest = self.held.split_off(self.syntax.open.len());
        out.push_str(&std::mem::take(&mut self.held));
        self.state = State::Text;
        self.reread(&rest, out);
    }

    fn reread(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            self.held.push(c);
            self.read(c, out);
        }
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// A function's name as tools are named (OpenAI's: letters, digits, `_`, `-`; `.` too).
fn is_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && name.chars().all(is_name_char)
}

#[cfg(test)]
mod tests {
    use super::super::call_block;
    use super::*;

    /// `text` streamed in pieces of `size` characters.
    fn streamed(syntax: CallSyntax, text: &str, size: usize) -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut stream = NamedCallStream::new(syntax);
        let mut out: String = chars.chunks(size).map(|piece| stream.push(&piece.iter().collect::<String>())).collect();
        out.push_str(&stream.finish());
        out
    }

    #[test]
    fn calls_become_blocks_and_the_rest_passes_in_any_pieces() {
        let block = call_block;
        let cases: Vec<(CallSyntax, &str, String)> = vec![
            // Llama 3.x's call, the reply's whole text.
            (
                LLAMA3_CALLS,
                r#"{"name": "get_weather", "parameters": {"city":"Paris","unit":"celsius"}}"#,
                block("get_weather", r#"{"city":"Paris","unit":"celsius"}"#),
            ),
            // Braces and quotes inside strings do not end the arguments.
            (
                LLAMA3_CALLS,
                r#"{"name": "note", "parameters": {"text":"a } \" { b","tags":["x"]}}"#,
                block("note", r#"{"text":"a } \" { b","tags":["x"]}"#),
            ),
            // Words, then a call; words after it pass too.
            (LLAMA3_CALLS, r#"Let me look. {"name": "f", "parameters": {}} done"#, format!("Let me look. {} done", block("f", "{}"))),
            // Text that only looks like an opening, JSON of another shape, arguments that are no object.
            (LLAMA3_CALLS, r#"{"name" is a key"#, r#"{"name" is a key"#.into()),
            (LLAMA3_CALLS, r#"{"name": "x", "age": 3}"#, r#"{"name": "x", "age": 3}"#.into()),
            (LLAMA3_CALLS, r#"{"name": "f", "parameters": 3}"#, r#"{"name": "f", "parameters": 3}"#.into()),
            (LLAMA3_CALLS, r#"{"name": "f", "parameters"#, r#"{"name": "f", "parameters"#.into()),
            // Cut off inside the arguments: an open block, as any model's; a wrong closing is text.
            (LLAMA3_CALLS, r#"{"name": "f", "parameters": {"a":"#, "<tool_call>\n{\"name\":\"f\",\"arguments\":{\"a\":".into()),
            (LLAMA3_CALLS, r#"{"name": "f", "parameters": {}]"#, format!("{}]", block("f", "{}"))),
            (LLAMA3_CALLS, "plain words, é and 日本", "plain words, é and 日本".into()),
            // Mistral's: several in a row, words before them; the last one whole at the end.
            (
                MISTRAL_CALLS,
                r#"Checking.[TOOL_CALLS]get_weather[ARGS]{"city":"Oslo"}[TOOL_CALLS]get_time[ARGS]{}"#,
                format!("Checking.{}{}", block("get_weather", r#"{"city":"Oslo"}"#), block("get_time", "{}")),
            ),
            (MISTRAL_CALLS, r#"[TOOL_CALLS]f[ARGS] {"a":1} and words"#, format!("{} and words", block("f", r#"{"a":1}"#))),
            // A name that is no name, and an opening with no call after it.
            (MISTRAL_CALLS, "[TOOL_CALLS]not a name[ARGS]{}", "[TOOL_CALLS]not a name[ARGS]{}".into()),
            (MISTRAL_CALLS, "[TOOL_CALLS][TOOL_CALLS]f[ARGS]{}", format!("[TOOL_CALLS]{}", block("f", "{}"))),
            // Functionary's: words, calls one after another; a tag of another kind is text.
            (
                FUNCTIONARY_CALLS,
                r#"On it.<function=get_weather>{"city":"Oslo"}</function><function=get_time>{}</function>"#,
                format!("On it.{}{}", block("get_weather", r#"{"city":"Oslo"}"#), block("get_time", "{}")),
            ),
            (FUNCTIONARY_CALLS, "<functions> and <function=a b>{}</function>", "<functions> and <function=a b>{}</function>".into()),
            // DeepSeek's: the markers around the calls dropped, words before them kept.
            (
                DEEPSEEK_CALLS,
                "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\":\"Oslo\"}<｜tool▁call▁end｜>\
                 <｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                format!("Sure.{}{}", block("get_weather", r#"{"city":"Oslo"}"#), block("get_time", "{}")),
            ),
            (
                DEEPSEEK_R1_CALLS,
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\":\"Oslo\"}\n```\
                 <｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                block("get_weather", r#"{"city":"Oslo"}"#),
            ),
            // A fence that is not the call's closing: what follows is text.
            (
                DEEPSEEK_R1_CALLS,
                "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n``` and so",
                format!("{}\n``` and so", block("f", "{}")),
            ),
            // Cut off after the opening marker: nothing of a call, nothing lost but the marker.
            (DEEPSEEK_CALLS, "A.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>", "A.<｜tool▁call▁begin｜>".into()),
            (DEEPSEEK_CALLS, "x <｜tool▁calls no marker", "x <｜tool▁calls no marker".into()),
        ];
        for (syntax, text, expected) in &cases {
            for size in [1, 3, 7, 1000] {
                assert_eq!(&streamed(*syntax, text, size), expected, "{text:?} in pieces of {size}");
            }
        }
    }

    /// A call's arguments pass on as they come: nothing of them waits for the object to close.
    #[test]
    fn arguments_stream_as_they_come() {
        let mut stream = NamedCallStream::new(MISTRAL_CALLS);
        assert_eq!(stream.push("[TOOL_CALLS]get_"), "", "a name is held until it is known");
        assert_eq!(stream.push("weather[ARGS]"), "");
        assert_eq!(stream.push("{\"city\":\"Os"), "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Os");
        assert_eq!(stream.push("lo\"}"), "lo\"}}\n</tool_call>");
        assert_eq!(stream.push(" bye"), " bye");
    }
}
