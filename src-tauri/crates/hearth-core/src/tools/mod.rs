//! Tools a model may call: what one is (its name, what it does, its arguments' JSON schema),
//! how a request says whether to call one, and the calls a local model writes.
//!
//! A local model writes a call in its family's format; Hearth keeps Hermes/Qwen's, also the
//! generic format it teaches a model whose template knows no tools:
//! `<tool_call>\n{"name": "…", "arguments": {…}}\n</tool_call>`, one block per call. Other
//! families' calls are read into it as they stream: Llama 3.x's bare JSON, Mistral's
//! `[TOOL_CALLS]` and DeepSeek's markers ([`NamedCallStream`]), Mistral Nemo's and Command R7B's
//! lists of calls ([`ListCallStream`]), gpt-oss's channels (`crate::harmony`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod list_calls;
mod named_calls;

pub use list_calls::{COMMAND_R_CALLS, CallNumbering, ListCallStream, ListSyntax, MISTRAL_NEMO_CALLS, call_id};
pub use named_calls::{CallSyntax, DEEPSEEK_CALLS, DEEPSEEK_R1_CALLS, FUNCTIONARY_CALLS, LLAMA3_CALLS, MISTRAL_CALLS, NamedCallStream};

/// How a family writes its calls, where that is not Hearth's block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallShape {
    /// Each call around the function's name ([`NamedCallStream`]).
    Named(CallSyntax),
    /// A turn's calls as a JSON list ([`ListCallStream`]).
    List(ListSyntax),
}

impl CallShape {
    /// The markers the model writes (some are control tokens, written as their text).
    pub fn markers(&self) -> Vec<&'static str> {
        match self {
            CallShape::Named(syntax) => syntax.markers().collect(),
            CallShape::List(syntax) => [syntax.open, syntax.close].into_iter().filter(|m| !m.is_empty()).collect(),
        }
    }

    /// A reader of a reply's calls in this shape.
    pub fn reader(&self) -> CallReader {
        match *self {
            CallShape::Named(syntax) => CallReader::Named(NamedCallStream::new(syntax)),
            CallShape::List(syntax) => CallReader::List(ListCallStream::new(syntax)),
        }
    }
}

/// Reads a reply's calls, written in its family's shape, into Hearth's blocks as they stream.
#[derive(Debug)]
pub enum CallReader {
    Named(NamedCallStream),
    List(ListCallStream),
}

impl CallReader {
    /// The reply's text for `delta`.
    pub fn push(&mut self, delta: &str) -> String {
        match self {
            CallReader::Named(stream) => stream.push(delta),
            CallReader::List(stream) => stream.push(delta),
        }
    }

    /// What is still held back once the reply has ended.
    pub fn finish(&mut self) -> String {
        match self {
            CallReader::Named(stream) => stream.finish(),
            CallReader::List(stream) => stream.finish(),
        }
    }
}

/// Where a call opens and closes in the model's text.
pub const CALL_OPEN: &str = "<tool_call>";
pub const CALL_CLOSE: &str = "</tool_call>";

/// A call as a local model writes it, the one layout: the engine's grammar keeps the model to
/// it, and a call sent back in the history is written the same, so that the next round's prompt
/// starts with the tokens the cache holds. `arguments` is JSON text, as the model wrote it.
pub fn call_block(name: &str, arguments: &str) -> String {
    format!("{}{arguments}{}", call_block_start(name), call_block_end())
}

/// A call block up to its arguments, and after them: a block written as the arguments come.
fn call_block_start(name: &str) -> String {
    format!("{CALL_OPEN}\n{{\"name\":{},\"arguments\":", Value::String(name.to_owned()))
}

fn call_block_end() -> String {
    format!("}}\n{CALL_CLOSE}")
}

/// The longest tool name OpenAI accepts; Hearth takes the same.
const MAX_NAME: usize = 64;

/// A function the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    /// What it does, for the model to read.
    #[serde(default)]
    pub description: String,
    /// The JSON schema of its arguments (an object).
    pub parameters: Value,
}

/// Whether the model calls a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum ToolChoice {
    /// The model chooses: text, or a call.
    #[default]
    Auto,
    /// No call: the tools are not offered.
    None,
    /// At least one call.
    Required,
    /// A call of this tool.
    Named(String),
}

/// A tool's result as a local model reads it: a `<tool_response>` block in the user's turn, as
/// Hermes and Qwen's templates put it.
pub fn tool_response(content: &str) -> String {
    format!("<tool_response>\n{content}\n</tool_response>")
}

/// How a call the model wrote went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum ToolRunEnd {
    /// The tool ran and answered (its answer may say it failed: `is_error`).
    Ran,
    /// The user said no.
    Denied,
    /// The user pressed Stop while it ran.
    Stopped,
    /// It could not run (the server failed, the tool is unknown): the words are the result.
    Failed,
}

/// A tool message's record of its call: what ran, where, with which arguments, and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolRun {
    /// The tool's name as the model called it.
    pub name: String,
    /// The MCP server that has it.
    pub server: Option<String>,
    /// The arguments it ran with (the model's, or as the user edited them), JSON.
    pub arguments: String,
    pub end: ToolRunEnd,
    /// The tool said its answer is an error.
    pub is_error: bool,
    #[ts(type = "number")]
    pub elapsed_ms: u64,
    /// The length of the whole result, in characters.
    #[ts(type = "number")]
    pub chars: u64,
    /// The result was cut to fit the model's budget (the message holds what it read, the cut said).
    #[serde(default)]
    pub cut: bool,
}

/// A tool's result as the model reads it (cut to its budget), and its call's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub content: String,
    pub run: ToolRun,
}

/// A tool's answer `text` as the model reads it: cut to `budget` characters, saying so in words
/// at the cut; `run` records the whole answer's length and whether it was cut.
pub fn fit_result(text: &str, budget: usize, run: ToolRun) -> ToolResult {
    let total = text.chars().count();
    let run = ToolRun { chars: total as u64, cut: total > budget, ..run };
    if !run.cut {
        return ToolResult { content: text.to_owned(), run };
    }
    let kept: String = text.chars().take(budget).collect();
    ToolResult { content: format!("{kept}\n[… the result was cut here to fit: {budget} of {total} characters shown]"), run }
}

/// The tools a reply may call, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OfferedTools {
    pub tools: Vec<ToolSpec>,
    pub choice: ToolChoice,
    /// More than one call in a turn.
    pub parallel: bool,
}

/// A call the model wrote: the tool's name and its arguments as JSON text (as OpenAI sends them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A tool or a choice that cannot be offered, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("tool name {0:?} must be 1 to 64 letters, digits, '_' or '-'")]
    BadName(String),
    #[error("tool {0:?} is offered twice")]
    Duplicate(String),
    #[error("the parameters of tool {name:?} must be a JSON schema of an object: {why}")]
    BadSchema { name: String, why: String },
    #[error("tool_choice names {0:?}, which is not among the tools offered")]
    UnknownChoice(String),
    #[error("tool_choice {0:?} needs tools to choose from")]
    NothingToChoose(String),
}

impl ToolSpec {
    /// Checks what a model and a grammar rely on: a name a model can write and a schema of an
    /// object.
    pub fn check(&self) -> Result<(), ToolError> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= MAX_NAME
            && self.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !name_ok {
            return Err(ToolError::BadName(self.name.clone()));
        }
        let bad = |why: &str| ToolError::BadSchema { name: self.name.clone(), why: why.into() };
        let schema = self.parameters.as_object().ok_or_else(|| bad("it is not a JSON object"))?;
        match schema.get("type") {
            None | Some(Value::Null) => {}
            Some(Value::String(kind)) if kind == "object" => {}
            Some(other) => return Err(bad(&format!("its type is {other}, not \"object\""))),
        }
        if let Some(properties) = schema.get("properties")
            && !properties.is_object()
        {
            return Err(bad("its \"properties\" is not an object"));
        }
        Ok(())
    }
}

/// Checks a set of tools and a choice among them together.
pub fn check_tools(tools: &[ToolSpec], choice: &ToolChoice) -> Result<(), ToolError> {
    for (i, tool) in tools.iter().enumerate() {
        tool.check()?;
        if tools[..i].iter().any(|t| t.name == tool.name) {
            return Err(ToolError::Duplicate(tool.name.clone()));
        }
    }
    match choice {
        ToolChoice::Named(name) if !tools.iter().any(|t| &t.name == name) => Err(ToolError::UnknownChoice(name.clone())),
        ToolChoice::Required if tools.is_empty() => Err(ToolError::NothingToChoose("required".into())),
        _ => Ok(()),
    }
}

/// A model's text read for calls: the text outside them, and the calls in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadCalls {
    pub content: String,
    pub calls: Vec<WrittenCall>,
    /// What was inside a call block that is not a call (`{"name": …, "arguments": {…}}`), in words:
    /// kept as text in `content` too, so nothing the model wrote is lost.
    pub malformed: Vec<String>,
}

/// A call as the model wrote it, before it is given an id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct WrittenCall {
    pub name: String,
    /// The arguments as JSON text: as the model wrote them when they were an object in the call
    /// (so they come back to it unchanged), else compact.
    pub arguments: String,
}

/// The calls a stored message holds: an assistant reply's, read from its text; none for others.
pub fn written_calls(role: crate::Role, content: &str) -> Vec<WrittenCall> {
    match role {
        crate::Role::Assistant if content.contains(CALL_OPEN) => read_calls(content).calls,
        _ => Vec::new(),
    }
}

/// Reads a finished reply's calls. A block that does not hold a call stays in the text.
pub fn read_calls(text: &str) -> ReadCalls {
    let mut read = ReadCalls::default();
    let mut rest = text;
    while let Some(open) = rest.find(CALL_OPEN) {
        let after = &rest[open + CALL_OPEN.len()..];
        let Some(close) = after.find(CALL_CLOSE) else { break };
        let body = &after[..close];
        match call_in(body) {
            Ok(call) => {
                read.content.push_str(&rest[..open]);
                read.calls.push(call);
            }
            Err(why) => {
                read.content.push_str(&rest[..open + CALL_OPEN.len() + close + CALL_CLOSE.len()]);
                read.malformed.push(why);
            }
        }
        rest = &after[close + CALL_CLOSE.len()..];
    }
    read.content.push_str(rest);
    read.content = read.content.trim().to_owned();
    read
}

/// The call in a block's text: `{"name": "…", "arguments": {…}}` (arguments may also be JSON text).
fn call_in(body: &str) -> Result<WrittenCall, String> {
    let value: Value = serde_json::from_str(body.trim()).map_err(|e| format!("a call that is not JSON ({e})"))?;
    let name = value.get("name").and_then(Value::as_str).ok_or("a call without a name")?;
    let key = if value.get("arguments").is_some() { "arguments" } else { "parameters" };
    let arguments = match value.get(key) {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(text)) => serde_json::from_str(text).map_err(|e| format!("arguments of {name} that are not JSON ({e})"))?,
        Some(other) => other.clone(),
    };
    if !arguments.is_object() {
        return Err(format!("arguments of {name} that are not a JSON object"));
    }
    let written = value.get(key).filter(|v| v.is_object()).and_then(|v| raw_member(body, key, v));
    Ok(WrittenCall { name: name.to_owned(), arguments: written.map_or_else(|| arguments.to_string(), str::to_owned) })
}

/// The text of member `key` of the JSON object `body`, whose value is `value`: the first
/// `"key":` followed by exactly that value (a string elsewhere may spell the key too).
fn raw_member<'a>(body: &'a str, key: &str, value: &Value) -> Option<&'a str> {
    let quoted = format!("\"{key}\"");
    body.match_indices(&quoted).find_map(|(at, _)| {
        let after = body[at + quoted.len()..].trim_start();
        let rest = after.strip_prefix(':')?.trim_start();
        let start = body.len() - rest.len();
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let parsed = values.next()?.ok()?;
        (&parsed == value).then(|| &body[start..start + values.byte_offset()])
    })
}

/// A conversation's message as an API with structured calls sends it: a reply's calls read
/// from its text, each with an id, and each tool result paired with the call it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallTurn<'a> {
    /// A message that neither calls nor answers a call.
    Said(&'a crate::ChatMessage),
    /// A reply that calls: its text outside the calls, and each call with its id.
    Calls { text: String, calls: Vec<(String, WrittenCall)> },
    /// A tool's result, answering the call with this id.
    Answer { call_id: String, content: &'a str },
}

/// `messages` with their calls and results paired. A call's id is `{prefix}_{reply}_{call}`:
/// its reply's place in the conversation and its place among the reply's calls, so that a
/// conversation sent again reads the same. Results follow their reply in its calls' order.
pub fn call_turns<'a>(messages: &'a [crate::ChatMessage], prefix: &str) -> Vec<CallTurn<'a>> {
    let id = |reply: usize, call: usize| format!("{prefix}_{reply}_{call}");
    let mut answering: Option<(usize, usize)> = None; // (the calling reply's place, results so far)
    let mut turns = Vec::with_capacity(messages.len());
    for (place, m) in messages.iter().enumerate() {
        turns.push(match m.role {
            crate::Role::Assistant if m.content.contains(CALL_OPEN) => {
                let read = read_calls(&m.content);
                answering = Some((place, 0));
                let calls = read.calls.into_iter().enumerate().map(|(k, call)| (id(place, k), call)).collect();
                CallTurn::Calls { text: read.content, calls }
            }
            crate::Role::Tool => {
                let (reply, k) = answering.unwrap_or((place, 0));
                answering = Some((reply, k + 1));
                CallTurn::Answer { call_id: id(reply, k), content: &m.content }
            }
            _ => {
                answering = None;
                CallTurn::Said(m)
            }
        });
    }
    turns
}

/// While a reply streams: how much of the text so far can be shown as text. A call block, open
/// or closed, is not text, nor is an end that may be the start of one (`<tool`), until more comes.
pub fn shown_text_len(text: &str) -> usize {
    if let Some(open) = text.find(CALL_OPEN) {
        return open;
    }
    // The longest end of `text` that begins CALL_OPEN waits.
    (1..CALL_OPEN.len()).rev().find(|&n| text.ends_with(&CALL_OPEN[..n])).map_or(text.len(), |n| text.len() - n)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, parameters: Value) -> ToolSpec {
        ToolSpec { name: name.into(), description: String::new(), parameters }
    }

    #[test]
    fn tools_and_choices_are_checked_in_words() {
        let weather = tool("get_weather", json!({"type": "object", "properties": {"city": {"type": "string"}}}));
        let cases: Vec<(Vec<ToolSpec>, ToolChoice, Result<(), &str>)> = vec![
            (vec![weather.clone()], ToolChoice::Auto, Ok(())),
            (vec![weather.clone()], ToolChoice::Named("get_weather".into()), Ok(())),
            (vec![tool("no_params", json!({}))], ToolChoice::Required, Ok(())),
            (vec![], ToolChoice::Auto, Ok(())),
            (vec![], ToolChoice::Required, Err("needs tools to choose from")),
            (vec![weather.clone()], ToolChoice::Named("get_time".into()), Err("\"get_time\", which is not among the tools")),
            (vec![weather.clone(), weather.clone()], ToolChoice::Auto, Err("offered twice")),
            (vec![tool("get weather", json!({}))], ToolChoice::Auto, Err("must be 1 to 64 letters")),
            (vec![tool("", json!({}))], ToolChoice::Auto, Err("must be 1 to 64 letters")),
            (vec![tool(&"x".repeat(65), json!({}))], ToolChoice::Auto, Err("must be 1 to 64 letters")),
            (vec![tool("f", json!("object"))], ToolChoice::Auto, Err("it is not a JSON object")),
            (vec![tool("f", json!({"type": "array"}))], ToolChoice::Auto, Err("its type is \"array\"")),
            (vec![tool("f", json!({"properties": []}))], ToolChoice::Auto, Err("\"properties\" is not an object")),
        ];
        for (tools, choice, expected) in cases {
            let got = check_tools(&tools, &choice).map_err(|e| e.to_string());
            match expected {
                Ok(()) => assert_eq!(got, Ok(()), "{tools:?} {choice:?}"),
                Err(fragment) => assert!(got.as_ref().is_err_and(|e| e.contains(fragment)), "{got:?} should say {fragment:?}"),
            }
        }
    }

    #[test]
    fn calls_are_read_out_of_the_text_around_them() {
        let call = |name: &str, arguments: &str| WrittenCall { name: name.into(), arguments: arguments.into() };
        let cases: Vec<(&str, &str, Vec<WrittenCall>, usize)> = vec![
            ("Just text.", "Just text.", vec![], 0),
            // The arguments as written: spacing and order kept.
            (
                "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": \"celsius\", \"city\": \"Paris\"}}\n</tool_call>",
                "",
                vec![call("get_weather", r#"{"unit": "celsius", "city": "Paris"}"#)],
                0,
            ),
            // A string that spells the key does not mislead.
            (
                r#"<tool_call>{"name":"say","arguments":{"text":"\"arguments\": {}"}}</tool_call>"#,
                "",
                vec![call("say", r#"{"text":"\"arguments\": {}"}"#)],
                0,
            ),
            (
                "Let me look.\n<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"b\",\"arguments\":\"{\\\"x\\\": 1}\"}</tool_call>",
                "Let me look.",
                vec![call("a", "{}"), call("b", r#"{"x":1}"#)],
                0,
            ),
            // Some models write `parameters`; a call without arguments has none.
            ("<tool_call>{\"name\":\"a\",\"parameters\":{\"k\":true}}</tool_call>", "", vec![call("a", r#"{"k":true}"#)], 0),
            ("<tool_call>{\"name\":\"a\"}</tool_call>", "", vec![call("a", "{}")], 0),
            // Not a call: kept as the model wrote it, and said.
            ("<tool_call>not json</tool_call> after", "<tool_call>not json</tool_call> after", vec![], 1),
            ("<tool_call>{\"arguments\":{}}</tool_call>", "<tool_call>{\"arguments\":{}}</tool_call>", vec![], 1),
            (
                "<tool_call>{\"name\":\"a\",\"arguments\":[1]}</tool_call>",
                "<tool_call>{\"name\":\"a\",\"arguments\":[1]}</tool_call>",
                vec![],
                1,
            ),
            // Cut off inside a call: the text stays.
            ("Sure. <tool_call>{\"name\":", "Sure. <tool_call>{\"name\":", vec![], 0),
        ];
        for (text, content, calls, malformed) in cases {
            let read = read_calls(text);
            assert_eq!((read.content.as_str(), &read.calls, read.malformed.len()), (content, &calls, malformed), "{text:?}");
        }
    }

    #[test]
    fn a_call_block_reads_back_as_the_same_call() {
        let block = call_block("get_weather", r#"{"city":"Paris","unit":"celsius"}"#);
        assert_eq!(block, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\",\"unit\":\"celsius\"}}\n</tool_call>");
        let read = read_calls(&block);
        assert_eq!(read.calls, [WrittenCall { name: "get_weather".into(), arguments: r#"{"city":"Paris","unit":"celsius"}"#.into() }]);
        assert_eq!(call_block(&read.calls[0].name, &read.calls[0].arguments), block);
    }

    #[test]
    fn streamed_text_holds_back_what_may_open_a_call() {
        let cases =
            [("Hello", 5), ("Hello <", 6), ("Hello <tool_", 6), ("Hello <tool_call>{\"na", 6), ("a < b", 5), ("<tool_call", 0), ("", 0)];
        for (text, shown) in cases {
            assert_eq!(shown_text_len(text), shown, "{text:?}");
        }
    }

    #[test]
    fn calls_and_results_are_paired_by_place() {
        use crate::{ChatMessage, Role};
        let calling = format!("Let me look.\n{}\n{}", call_block("find", r#"{"item":"kettle"}"#), call_block("clock", "{}"));
        let messages = [
            ChatMessage::new(Role::System, "Be brief."),
            ChatMessage::new(Role::User, "Where is the kettle, and what time is it?"),
            ChatMessage::new(Role::Assistant, calling),
            ChatMessage::new(Role::Tool, "Left cupboard."),
            ChatMessage::new(Role::Tool, "Noon."),
            ChatMessage::new(Role::Assistant, "In the left cupboard; it is noon."),
            ChatMessage::new(Role::Tool, "A stray result answers nothing: its own place."),
        ];
        let call = |name: &str, arguments: &str| WrittenCall { name: name.into(), arguments: arguments.into() };
        let turns = call_turns(&messages, "call");
        assert_eq!(turns[..2], [CallTurn::Said(&messages[0]), CallTurn::Said(&messages[1])]);
        assert_eq!(
            turns[2],
            CallTurn::Calls {
                text: "Let me look.".into(),
                calls: vec![("call_2_0".into(), call("find", r#"{"item":"kettle"}"#)), ("call_2_1".into(), call("clock", "{}"))],
            }
        );
        let answers: Vec<(&str, &str)> = turns
            .iter()
            .filter_map(|t| match t {
                CallTurn::Answer { call_id, content } => Some((call_id.as_str(), *content)),
                _ => None,
            })
            .collect();
        assert_eq!(
            answers,
            [("call_2_0", "Left cupboard."), ("call_2_1", "Noon."), ("call_6_0", "A stray result answers nothing: its own place.")]
        );
        assert_eq!(turns[5], CallTurn::Said(&messages[5]));
    }

    #[test]
    fn a_long_result_is_cut_in_words_and_its_record_says_so() {
        let run = ToolRun {
            name: "read".into(),
            server: None,
            arguments: "{}".into(),
            end: ToolRunEnd::Ran,
            is_error: false,
            elapsed_ms: 3,
            chars: 0,
            cut: false,
        };
        // (answer, budget, what the model reads, characters, cut)
        for (text, budget, content, chars, cut) in [
            ("short", 10, "short", 5, false),
            ("exactly10!", 10, "exactly10!", 10, false),
            ("héllo wörld", 5, "héllo\n[… the result was cut here to fit: 5 of 11 characters shown]", 11, true),
            ("", 0, "", 0, false),
        ] {
            let fitted = fit_result(text, budget, run.clone());
            assert_eq!((fitted.content.as_str(), fitted.run.chars, fitted.run.cut), (content, chars, cut), "{text:?}");
            assert_eq!(fitted.run.elapsed_ms, 3);
        }
    }
}
