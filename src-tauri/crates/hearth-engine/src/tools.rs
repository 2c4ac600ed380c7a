//! Tool calls from a local model: how its prompt offers the tools, and the grammar that keeps a
//! call it writes valid for the tool's schema.
//!
//! A template that takes `tools` and writes Hermes/Qwen `<tool_call>` blocks gets the tools as
//! it expects them. Any other model is told of the tools in a system message, in the same block
//! format (the generic format, with a notice: a model not trained on it may follow it poorly).
//! Either way the grammar is llama.cpp's JSON-schema grammar of the tools' calls, inside the
//! blocks; with `auto` it is lazy, binding only once the model opens a block, as llama.cpp's
//! server does, so a reply in words is left free. A template that writes gpt-oss's channels
//! (harmony) takes the tools too, and its model names the function in a message's header
//! (`to=functions.NAME`), the arguments its body: the grammar keeps both to a tool's schema, and
//! `hearth_core::harmony` reads the call into Hearth's block. Llama 3.x's and Mistral's
//! templates take the tools, and their models write a call as an opening, the function's name and
//! its arguments (`{"name": "…", "parameters": {…}}`, `[TOOL_CALLS]NAME[ARGS]{…}`); DeepSeek's
//! likewise, a turn's calls between two markers: kept to a tool's schema the same way, read by
//! `hearth_core::NamedCallStream`. Mistral Nemo's and Command R7B's write a turn's calls as a
//! JSON list, each with an id (`hearth_core::ListCallStream`). These templates read a past
//! reply's calls and the tools' results apart from the text, and write them their way.

use serde_json::{Value, json};

use hearth_core::harmony::CALL_RECIPIENT;
use hearth_core::{
    BackendError, CALL_CLOSE, CALL_OPEN, COMMAND_R_CALLS, CallShape, CallSyntax, DEEPSEEK_CALLS, DEEPSEEK_R1_CALLS, FUNCTIONARY_CALLS,
    LLAMA3_CALLS, ListSyntax, MISTRAL_CALLS, MISTRAL_NEMO_CALLS, OfferedTools, ToolChoice, ToolSpec, call_block, check_tools,
};

/// How a model is told of tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFormat {
    /// The template reads `tools` and writes calls as `<tool_call>` blocks (Hermes, Qwen 2.5+).
    Hermes,
    /// The template reads `tools` and writes gpt-oss's channels: a call is a message to
    /// `functions.NAME`.
    Harmony,
    /// The template reads `tools` and writes a call as Llama 3.x does: the turn's whole text is
    /// `{"name": "…", "parameters": {…}}`, one call a turn.
    Llama3,
    /// The template reads `tools` and writes calls as Mistral's recent models do (Mistral Small
    /// 3.2, Magistral, Devstral): `[TOOL_CALLS]NAME[ARGS]{…}`, one after another.
    Mistral,
    /// The template reads `tools` and writes a turn's calls as Mistral Nemo (and Mistral 7B v0.3)
    /// do: `[TOOL_CALLS]` and a JSON list, each call `{"name": "…", "arguments": {…}, "id": "…"}`
    /// with an id of nine letters and digits, which a tool's result names.
    MistralNemo,
    /// The template reads `tools` and writes a turn's calls as Command R7B does: a plan between
    /// `<|START_THINKING|>` and `<|END_THINKING|>`, then `<|START_ACTION|>`, a JSON list of
    /// `{"tool_call_id": "N", "tool_name": "…", "parameters": {…}}` (N counts the
    /// conversation's calls) and `<|END_ACTION|>`.
    CommandR,
    /// The template reads `tools` and writes calls as Functionary v3.1 does (and Llama 3.1 its
    /// custom tools): `<function=NAME>{…}</function>`, one after another; the arguments are text
    /// to it.
    Functionary,
    /// The template reads `tools` and writes calls as DeepSeek V3.1 and V3.2 do: a turn's calls
    /// between `<｜tool▁calls▁begin｜>` and `<｜tool▁calls▁end｜>`, each
    /// `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`; the arguments are text to it.
    DeepSeek,
    /// As [`ToolFormat::DeepSeek`], each call as DeepSeek R1 (0528) and V3 (0324) write it: its
    /// type, its name, and the arguments in a fenced JSON block.
    DeepSeekR1,
    /// The template knows no tools: a system message describes them.
    Generic,
}

/// What tells a Llama 3.x template: the member its calls are written with, and its turns' header.
const LLAMA3_PARAMETERS: &str = "\"parameters\": ";
const LLAMA3_HEADER: &str = "<|start_header_id|>";
/// What tells Mistral Nemo's calls from Mistral Small 3.2's: the list after the marker.
const NEMO_LIST: &str = "[TOOL_CALLS][";
/// What tells DeepSeek R1's calls from V3.1's: the arguments' fence.
const DEEPSEEK_FENCE: &str = "```json";

/// Said with a reply whose model was offered tools in the generic format.
pub const GENERIC_NOTICE: &str = "This model's chat template knows no tools: Hearth described them to it in a generic format, which a model not trained on it may follow poorly";

impl ToolFormat {
    /// The format a chat template's source says it knows.
    pub fn of_template(source: &str) -> ToolFormat {
        // DeepSeek's templates, as shipped, write calls back but list no tools (`lists_tools`).
        match reads_tools(source) {
            _ if source.contains(DEEPSEEK_CALLS.around.0) && source.contains(DEEPSEEK_FENCE) => ToolFormat::DeepSeekR1,
            _ if source.contains(DEEPSEEK_CALLS.around.0) => ToolFormat::DeepSeek,
            true if source.contains(hearth_core::harmony::CHANNEL) => ToolFormat::Harmony,
            true if source.contains(CALL_OPEN) => ToolFormat::Hermes,
            true if source.contains(FUNCTIONARY_CALLS.open) && source.contains(FUNCTIONARY_CALLS.close) => ToolFormat::Functionary,
            true if source.contains(LLAMA3_PARAMETERS) && source.contains(LLAMA3_HEADER) => ToolFormat::Llama3,
            true if source.contains(MISTRAL_CALLS.open) && source.contains(MISTRAL_CALLS.between) => ToolFormat::Mistral,
            true if source.contains(NEMO_LIST) => ToolFormat::MistralNemo,
            true if source.contains(COMMAND_R_CALLS.open) && source.contains(COMMAND_R_CALLS.close) => ToolFormat::CommandR,
            _ => ToolFormat::Generic,
        }
    }

    /// How its model writes a call around the function's name, where it is not a block.
    pub fn call_syntax(self) -> Option<CallSyntax> {
        match self {
            ToolFormat::Llama3 => Some(LLAMA3_CALLS),
            ToolFormat::Mistral => Some(MISTRAL_CALLS),
            ToolFormat::Functionary => Some(FUNCTIONARY_CALLS),
            ToolFormat::DeepSeek => Some(DEEPSEEK_CALLS),
            ToolFormat::DeepSeekR1 => Some(DEEPSEEK_R1_CALLS),
            ToolFormat::Hermes | ToolFormat::Harmony | ToolFormat::MistralNemo | ToolFormat::CommandR | ToolFormat::Generic => None,
        }
    }

    /// How its model writes calls, where that is neither Hermes's blocks nor gpt-oss's channels.
    pub fn call_shape(self) -> Option<CallShape> {
        match self {
            ToolFormat::MistralNemo => Some(CallShape::List(MISTRAL_NEMO_CALLS)),
            ToolFormat::CommandR => Some(CallShape::List(COMMAND_R_CALLS)),
            format => format.call_syntax().map(CallShape::Named),
        }
    }

    /// Whether a calling reply with no words is given to the template with its content null
    /// (DeepSeek's ask `content is none`; gpt-oss's looks into the text).
    pub fn calls_without_words_are_null(self) -> bool {
        matches!(self, ToolFormat::DeepSeek | ToolFormat::DeepSeekR1)
    }

    /// Whether the template writes a past call's arguments as the text they are (Functionary's
    /// and DeepSeek's join them to strings); others take the object (and `tojson` writes it back as it was written).
    pub fn takes_arguments_as_text(self) -> bool {
        matches!(self, ToolFormat::Functionary | ToolFormat::DeepSeek | ToolFormat::DeepSeekR1)
    }

    /// Whether the template reads a past reply's calls (`tool_calls`) and the tools' results
    /// (`tool` messages) apart from the text, and writes them its own way; else both are text as
    /// Hearth keeps them (call blocks, `<tool_response>` blocks in the user's turn).
    pub fn reads_calls_apart(self) -> bool {
        !matches!(self, ToolFormat::Hermes | ToolFormat::Generic)
    }

    /// Whether the template is given the tools (else a system message describes them).
    pub fn takes_tools(self) -> bool {
        self != ToolFormat::Generic
    }
}

/// Whether a template's source reads the variable `tools` (not in its comments, not as part of
/// another name such as `tool_calls`).
pub fn reads_tools(source: &str) -> bool {
    let mut code = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(at) = rest.find("{#") {
        code.push_str(&rest[..at]);
        rest = rest[at..].find("#}").map_or("", |end| &rest[at + end + 2..]);
    }
    code.push_str(rest);
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices("tools").any(|(at, word)| !code[..at].ends_with(is_name) && !code[at + word.len()..].starts_with(is_name))
}

/// The tools as OpenAI lists them: the shape chat templates read.
pub fn template_tools(tools: &[ToolSpec]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
        .collect()
}

/// The system message that offers `tools` to a model whose template lists none: a call is
/// written in the family's `syntax` where the template has one, else in Hearth's generic block.
pub fn tool_instructions(tools: &[ToolSpec], syntax: Option<CallSyntax>) -> String {
    let listed: Vec<String> = template_tools(tools).iter().map(Value::to_string).collect();
    let (name, arguments) = ("<tool name>", "<the arguments as a JSON object>");
    let example = match syntax {
        Some(CallSyntax { open, between, close, around: (before, after) }) => {
            format!("{before}{open}{name}{between}{arguments}{close}{after}")
        }
        None => call_block(name, arguments),
    };
    format!(
        "You can call these tools:\n<tools>\n{}\n</tools>\n\nTo call one, answer with only:\n{example}\nOtherwise, answer in words.",
        listed.join("\n"),
    )
}

/// The grammar of a reply's calls, in llama.cpp's GBNF (root rule `root`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolGrammar {
    pub gbnf: String,
    /// Lazy: the grammar binds once the model writes this (and reads from it on); else it binds
    /// from the first token.
    pub trigger: Option<&'static str>,
}

/// The most calls in one turn: a small model may repeat a call until its reply runs out.
pub const MAX_PARALLEL_CALLS: usize = 8;

/// Rule names of our own around the schema's grammar (its own are named after the schema).
const CALL_RULE: &str = "hearth-tool-call";
const BLOCK_RULE: &str = "hearth-tool-block";

/// Where a reply's calls start: what its prompt left it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallsAfter {
    /// The prompt opened the reply's reasoning (`<think>`, DeepSeek-R1's templates).
    pub reasoning_opened: bool,
    /// The model was asked to reason (`enable_thinking`): Command R7B's then writes its plan
    /// before its calls, which its template writes back even when empty.
    pub thinking: bool,
    /// How many calls the conversation holds (Mistral Nemo's and Command R7B's ids go on from
    /// there).
    pub first_call: usize,
}

/// The grammar for `offered` in `format`: none when no call may be made (`none`, or no tools).
/// After a prompt that opened the reply's reasoning, a call the reply must make closes the
/// reasoning first: else it would be written inside it.
pub fn grammar(offered: &OfferedTools, format: ToolFormat, after: CallsAfter) -> Result<Option<ToolGrammar>, BackendError> {
    let grammar = calls_grammar(offered, format, after)?;
    Ok(grammar.map(|grammar| match grammar.trigger {
        None if after.reasoning_opened => {
            let calls = rename_root(&grammar.gbnf, CALLS_RULE);
            ToolGrammar { gbnf: format!("root ::= {} {CALLS_RULE}\n{calls}", gbnf_literal(hearth_core::THINK_CLOSING)), trigger: None }
        }
        _ => grammar,
    }))
}

const CALLS_RULE: &str = "hearth-calls";

fn calls_grammar(offered: &OfferedTools, format: ToolFormat, after: CallsAfter) -> Result<Option<ToolGrammar>, BackendError> {
    check_tools(&offered.tools, &offered.choice).map_err(|e| BackendError::InvalidRequest(e.to_string()))?;
    let callable: Vec<&ToolSpec> = match &offered.choice {
        ToolChoice::None => return Ok(None),
        ToolChoice::Named(name) => offered.tools.iter().filter(|t| &t.name == name).collect(),
        ToolChoice::Auto | ToolChoice::Required => offered.tools.iter().collect(),
    };
    if callable.is_empty() {
        return Ok(None);
    }
    let lazy = offered.choice == ToolChoice::Auto;
    if format == ToolFormat::Harmony {
        return harmony_grammar(&callable, lazy).map(Some);
    }
    if let Some(CallShape::List(syntax)) = format.call_shape() {
        let most = if offered.parallel { MAX_PARALLEL_CALLS } else { 1 };
        // Bound from the first token, Command R7B's calls come after the plan it was asked for,
        // empty, as its template writes back a calling turn's.
        let plan = match format == ToolFormat::CommandR && after.thinking && !lazy {
            true => vec![COMMAND_R_THINKING.0, COMMAND_R_THINKING.1],
            false => Vec::new(),
        };
        let list = ListCalls { syntax, first_call: after.first_call, most, before: &plan };
        return list_grammar(&callable, list, lazy).map(Some);
    }
    if let Some(syntax) = format.call_syntax() {
        // Llama 3.x's template writes one call a turn back; R1's writes each after the first on
        // a line of its own, which the calls' grammar does not write.
        let parallel = offered.parallel && !matches!(format, ToolFormat::Llama3 | ToolFormat::DeepSeekR1);
        return named_grammar(&callable, syntax, lazy, parallel).map(Some);
    }
    let call = llama_cpp_2::json_schema_to_grammar(&call_schema(&callable))
        .map_err(|e| BackendError::InvalidRequest(format!("the tools' parameters cannot be used as a grammar: {e}")))?;
    let call = compact(&rename_root(&call, CALL_RULE));
    let repeat = if offered.parallel { format!(" (\"\\n\" {BLOCK_RULE}){{0,{}}}", MAX_PARALLEL_CALLS - 1) } else { String::new() };
    let gbnf = format!(
        "root ::= {BLOCK_RULE}{repeat}\n{BLOCK_RULE} ::= {open} \"\\n\" {CALL_RULE} \"\\n\" {close}\n{call}",
        open = gbnf_literal(CALL_OPEN),
        close = gbnf_literal(CALL_CLOSE),
    );
    Ok(Some(ToolGrammar { gbnf, trigger: lazy.then_some(CALL_OPEN) }))
}

/// One call, gpt-oss's way: the function named in the header, then its arguments, compact; the
/// turn ends there (`<|call|>`). Bound from the first token (`required`, a named tool), it is
/// written as gpt-oss's template writes a call back (`to=functions.NAME<|channel|>commentary
/// json<|message|>`), so the next round's prompt is the cache's own tokens. Lazy for `auto`: bound
/// from the recipient on, wherever the model put its channel (before the recipient, as gpt-oss
/// is trained to, or after).
fn harmony_grammar(tools: &[&ToolSpec], lazy: bool) -> Result<ToolGrammar, BackendError> {
    let (calls, rules) = named_calls(tools, HARMONY_HEAD)?;
    let commentary = gbnf_literal("<|channel|>commentary");
    let message = gbnf_literal(hearth_core::harmony::MESSAGE);
    let (before, head) = match lazy {
        true => (format!("{commentary}? "), format!("{commentary}? \" \"? {}? \"json\"? {message}", gbnf_literal("<|constrain|>"))),
        false => (String::new(), format!("{commentary} \" json\" {message}")),
    };
    let gbnf =
        format!("root ::= {before}{recipient} ({calls})\n{HARMONY_HEAD} ::= {head}\n{rules}", recipient = gbnf_literal(CALL_RECIPIENT));
    Ok(ToolGrammar { gbnf, trigger: lazy.then_some(CALL_RECIPIENT) })
}

const HARMONY_HEAD: &str = "hearth-harmony-head";

/// Calls in a family's `syntax`, written as its template writes one back (Llama 3.x's: `{"name":
/// "NAME", "parameters": ARGS}`; Mistral's: `[TOOL_CALLS]NAME[ARGS]ARGS`; DeepSeek's between their
/// markers), the arguments compact as `tojson` writes them, so that the next round's prompt is
/// the cache's own tokens; the turn ends after them. Lazy for `auto`: bound from the first marker
/// on.
fn named_grammar(tools: &[&ToolSpec], syntax: CallSyntax, lazy: bool, parallel: bool) -> Result<ToolGrammar, BackendError> {
    let (calls, rules) = named_calls(tools, NAMED_HEAD)?;
    let literal = |marker: &str| if marker.is_empty() { String::new() } else { format!(" {}", gbnf_literal(marker)) };
    let repeat = if parallel { format!("{{1,{MAX_PARALLEL_CALLS}}}") } else { String::new() };
    let (before, after) = (literal(syntax.around.0), literal(syntax.around.1));
    let gbnf = format!(
        "root ::={before} {NAMED_CALL}{repeat}{after}\n{NAMED_CALL} ::= {open} ({calls}){close}\n{NAMED_HEAD} ::= {between}\n{rules}",
        open = gbnf_literal(syntax.open),
        close = literal(syntax.close),
        between = gbnf_literal(syntax.between),
    );
    Ok(ToolGrammar { gbnf, trigger: lazy.then_some(syntax.first()) })
}

/// Command R7B's plan before its calls.
pub const COMMAND_R_THINKING: (&str, &str) = ("<|START_THINKING|>", "<|END_THINKING|>");

/// A turn's calls as a list: in which syntax, numbered from which, how many at most, after which
/// markers.
struct ListCalls<'a> {
    syntax: ListSyntax,
    first_call: usize,
    most: usize,
    before: &'a [&'a str],
}

/// A turn's calls as a JSON list, written as the family's template writes them back (Mistral
/// Nemo's: `[{"name": "NAME", "arguments": ARGS, "id": "ID"}, …]`; Command R7B's: a call a line,
/// `{"tool_call_id": "ID", "tool_name": "NAME", "parameters": ARGS}`), the arguments compact as
/// the model wrote them, each call's id the next of the conversation's ([`ListSyntax::id_of`]
/// from `first_call` on), so that the next round's prompt is the cache's own tokens. Lazy for
/// `auto`: bound from the list's marker on.
fn list_grammar(tools: &[&ToolSpec], list: ListCalls<'_>, lazy: bool) -> Result<ToolGrammar, BackendError> {
    let ListCalls { syntax, first_call, most, before } = list;
    let (calls, arguments) = named_calls(tools, LIST_HEAD)?;
    let [start, between, end] = syntax.layout.map(gbnf_literal);
    let (mut alternatives, mut rules) = (String::new(), String::new());
    // The turn's i-th call with its id, then maybe the ones after it.
    for i in (0..most).rev() {
        let id = syntax.id_of(first_call + i);
        let (opening, closing) = match syntax.id_first {
            true => (format!("{{\"{}\": \"{id}\", \"{}\": \"", syntax.id, syntax.name), "}".to_owned()),
            false => (format!("{{\"{}\": \"", syntax.name), format!(", \"{}\": \"{id}\"}}", syntax.id)),
        };
        rules.push_str(&format!("{LIST_CALL}-{i} ::= {} ({calls}) {}\n", gbnf_literal(&opening), gbnf_literal(&closing)));
        alternatives = match alternatives.is_empty() {
            true => format!("{LIST_CALL}-{i}"),
            false => format!("{LIST_CALL}-{i} ({between} {alternatives})?"),
        };
    }
    let head = gbnf_literal(&format!("\", \"{}\": ", syntax.arguments));
    let opening: Vec<String> = before.iter().chain([&syntax.open]).map(|m| gbnf_marker(m)).collect();
    let close = if syntax.close.is_empty() { String::new() } else { format!(" {}", gbnf_marker(syntax.close)) };
    let gbnf = format!("root ::= {} {start} {alternatives} {end}{close}\n{rules}{LIST_HEAD} ::= {head}\n{arguments}", opening.join(" "));
    Ok(ToolGrammar { gbnf, trigger: lazy.then_some(syntax.open) })
}

const LIST_CALL: &str = "hearth-list-call";
const LIST_HEAD: &str = "hearth-list-head";

const NAMED_CALL: &str = "hearth-named-call";
const NAMED_HEAD: &str = "hearth-named-head";

/// Each tool's name, then the rule `head`, then its arguments by its schema: the alternatives
/// (`a | b`) and the rules they use, each tool's prefixed apart from the others'.
fn named_calls(tools: &[&ToolSpec], head: &str) -> Result<(String, String), BackendError> {
    let mut rules = Vec::new();
    let mut calls = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let arguments = llama_cpp_2::json_schema_to_grammar(&object_schema(&tool.parameters))
            .map_err(|e| BackendError::InvalidRequest(format!("the parameters of {} cannot be used as a grammar: {e}", tool.name)))?;
        let prefix = format!("hearth-t{i}-");
        rules.push(prefix_rules(&compact(&arguments), &prefix));
        calls.push(format!("{} {head} {prefix}root", gbnf_literal(&tool.name)));
    }
    Ok((calls.join(" | "), rules.join("\n")))
}

/// `gbnf` with each of its rules' names prefixed by `prefix` where they are defined and used
/// (never inside a string literal or a character class), so that several grammars live in one.
fn prefix_rules(gbnf: &str, prefix: &str) -> String {
    let names: std::collections::HashSet<&str> =
        gbnf.lines().filter_map(|line| line.split_once(" ::=").map(|(name, _)| name.trim())).collect();
    let mut out = String::with_capacity(gbnf.len() * 2);
    let mut chars = gbnf.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' | '[' => {
                let close = if c == '"' { '"' } else { ']' };
                out.push(c);
                while let Some((_, c)) = chars.next() {
                    out.push(c);
                    if c == '\\' {
                        if let Some((_, escaped)) = chars.next() {
                            out.push(escaped);
                        }
                    } else if c == close {
                        break;
                    }
                }
            }
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => {
                let mut end = at + c.len_utf8();
                while let Some(&(next, c)) = chars.peek() {
                    if !(c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                        break;
                    }
                    end = next + c.len_utf8();
                    chars.next();
                }
                let word = &gbnf[at..end];
                if names.contains(word) {
                    out.push_str(prefix);
                }
                out.push_str(word);
            }
            c => out.push(c),
        }
    }
    out
}

/// One call of any of `tools`: `{"name": <its name>, "arguments": <its schema>}`, written as JSON
/// text so that `name` comes first (llama.cpp's converter keeps the order it reads; a map would
/// sort `arguments` first, and models are trained to name the tool first).
fn call_schema(tools: &[&ToolSpec]) -> String {
    let one = |t: &ToolSpec| {
        format!(
            r#"{{"type":"object","properties":{{"name":{{"const":{}}},"arguments":{}}},"required":["name","arguments"]}}"#,
            Value::String(t.name.clone()),
            object_schema(&t.parameters),
        )
    };
    match tools {
        [only] => one(only),
        many => format!(r#"{{"oneOf":[{}]}}"#, many.iter().map(|t| one(t)).collect::<Vec<_>>().join(",")),
    }
}

/// A tool's parameters as an object schema (an empty one: any object).
fn object_schema(parameters: &Value) -> String {
    match parameters.as_object() {
        Some(schema) if schema.contains_key("type") => parameters.to_string(),
        Some(schema) => {
            let mut schema = schema.clone();
            schema.insert("type".into(), "object".into());
            Value::Object(schema).to_string()
        }
        None => r#"{"type":"object"}"#.into(),
    }
}

/// `gbnf` with no room between JSON's tokens: the call comes out as `call_block` writes it, the
/// same text every time, so a call sent back in the history matches the cache token for token
/// (and takes fewer tokens to write).
fn compact(gbnf: &str) -> String {
    gbnf.lines().map(|line| if line.starts_with("space ::=") { "space ::= \"\"" } else { line }).collect::<Vec<_>>().join("\n")
}

/// `gbnf` with its `root` rule named `name` (references to it too).
fn rename_root(gbnf: &str, name: &str) -> String {
    gbnf.lines()
        .map(|line| match line.strip_prefix("root ::=") {
            Some(rest) => format!("{name} ::={rest}"),
            None => line.to_owned(),
        })
        .map(|line| line.split(' ').map(|word| if word == "root" { name } else { word }).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A family's marker in a grammar: a special token's name (`<|…|>`) is that token, as the model
/// writes it and its template's text reads (its letters one by one would be other tokens); other
/// markers are their text.
fn gbnf_marker(marker: &str) -> String {
    let token = marker.starts_with("<|") && marker.ends_with("|>") && !marker[1..marker.len() - 1].contains(['<', '>', '"']);
    if token { marker.to_owned() } else { gbnf_literal(marker) }
}

/// `text` as a GBNF string literal.
fn gbnf_literal(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n"))
}

#[cfg(test)]
mod tests;
