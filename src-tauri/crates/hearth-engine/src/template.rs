//! Renders a conversation into the prompt text the model was trained on.
//!
//! The GGUF's own Jinja template is rendered with minijinja (llama.cpp's built-in renderer only
//! recognises a fixed list of formats); llama.cpp's renderer is the fallback.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;

use minijinja::{Environment, ErrorKind, Value};
use serde::Serialize;

use hearth_core::{CALL_OPEN, ChatMessage, ReasoningFormat, ReplyParts, Role, read_calls, reasoning_format, split_reasoning};

use crate::tools::ToolFormat;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the model's chat template failed: {0}")]
pub struct TemplateError(pub String);

/// Instructions a render may take: real templates need a few hundred per message, so this
/// allows chats of tens of thousands of messages and stops a template that loops forever in well
/// under a second.
const FUEL: u64 = 50_000_000;
/// The longest prompt a template may write (far beyond any context window's worth of text).
const MAX_PROMPT_BYTES: usize = 32 << 20;

/// A compiled chat template plus the special tokens it may refer to.
pub struct ChatTemplate {
    env: Environment<'static>,
    bos_token: String,
    eos_token: String,
    reasoning: ReasoningFormat,
    tools: ToolFormat,
    /// Whether it reads the tools offered (`tools`); DeepSeek's, as shipped, write calls but list
    /// no tools.
    lists_tools: bool,
    think_markers: Option<(&'static str, &'static str)>,
}

#[derive(Serialize)]
struct TemplateMessage<'a> {
    role: &'a str,
    /// None (null) for a reply that only called, for templates that ask `content is none`
    /// (DeepSeek's write a calling reply's words as a turn of their own when there are any);
    /// others take the empty text (gpt-oss's looks into it).
    content: Option<Cow<'a, str>>,
    /// A past reply's reasoning, apart from its answer, for a template that reads it so
    /// (gpt-oss's); other templates read the reply's text as stored, its `<think>` block in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a str>,
    /// A past reply's reasoning, apart from its answer, for a template that writes it with
    /// markers of its own (Command R7B's: [`crate::tools::COMMAND_R_THINKING`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
    /// A past reply's calls, apart from its text, for a template that reads them so (gpt-oss's,
    /// Llama 3.x's: `ToolFormat::reads_calls_apart`); others read Hearth's call blocks in the
    /// text, the format they were trained on or taught.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<Value>>,
    /// A tool's result: the id of the call it answers (the calls of the reply before, in order;
    /// Mistral's templates require it).
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
}

impl<'a> TemplateMessage<'a> {
    /// `message`, its calls (if read apart) numbered from `ids.next`; `reasoning_apart`: its
    /// reasoning is given apart as `reasoning_content`.
    fn of(
        message: &'a ChatMessage,
        reasoning: ReasoningFormat,
        tools: ToolFormat,
        reasoning_apart: bool,
        ids: &mut CallIds,
    ) -> TemplateMessage<'a> {
        let role = message.role.as_str();
        let tool_call_id = (message.role == Role::Tool).then(|| ids.answered()).flatten();
        let content = Some(Cow::Borrowed(message.content.as_str()));
        let plain = TemplateMessage { role, content, thinking: None, reasoning_content: None, tool_calls: None, tool_call_id };
        if message.role != Role::Assistant {
            return plain;
        }
        let split = reasoning == ReasoningFormat::Channels || reasoning_apart;
        let parts = match split {
            true => split_reasoning(&message.content),
            false => ReplyParts { reasoning: None, answer: &message.content, closed: false },
        };
        // The reasoning goes to gpt-oss's template as `thinking`, to Command R7B's as
        // `reasoning_content`; others read it in the text (and drop it themselves).
        let (thinking, reasoning_content) = if reasoning_apart { (None, parts.reasoning) } else { (parts.reasoning, None) };
        if !tools.reads_calls_apart() || !parts.answer.contains(CALL_OPEN) {
            return TemplateMessage { content: Some(Cow::Borrowed(parts.answer)), thinking, reasoning_content, ..plain };
        }
        // Other templates do not write a calling reply's reasoning back.
        let parts = if split { parts } else { ReplyParts { reasoning: None, ..split_reasoning(&message.content) } };
        let read = read_calls(parts.answer);
        // The arguments as the model wrote them: `tojson` writes them back as they were (a
        // template that joins them to strings is given their text), so the cache holds the same
        // tokens.
        let calls = read.calls.iter().map(|call| {
            let arguments = match tools.takes_arguments_as_text() {
                true => Value::from(call.arguments.as_str()),
                false => RawJson::value(&call.arguments),
            };
            let id = ids.called();
            minijinja::context! { id => id, type => "function", function => minijinja::context! { name => call.name, arguments => arguments } }
        });
        // gpt-oss's template takes a calling reply's reasoning or its words, not both.
        let thinking = thinking.filter(|_| read.content.is_empty());
        let content = match read.content.trim().is_empty() && tools.calls_without_words_are_null() {
            true => None,
            false => Some(Cow::Owned(read.content)),
        };
        let calls = calls.collect();
        TemplateMessage { role, content, thinking, reasoning_content, tool_calls: Some(calls), tool_call_id: None }
    }
}

/// The ids of a conversation's calls, as a template is given them: numbered in order
/// ([`hearth_core::call_id`]), each tool result answering the next call of the reply before it.
#[derive(Default)]
struct CallIds {
    next: usize,
    unanswered: std::collections::VecDeque<String>,
}

impl CallIds {
    fn called(&mut self) -> String {
        let id = hearth_core::call_id(self.next);
        self.next += 1;
        self.unanswered.push_back(id.clone());
        id
    }

    fn answered(&mut self) -> Option<String> {
        self.unanswered.pop_front()
    }
}

/// How many calls `messages` hold, as a template that reads them apart is given them: the next
/// call's id is [`hearth_core::call_id`] of it.
pub fn calls_before(messages: &[ChatMessage], reasoning: ReasoningFormat, tools: ToolFormat) -> usize {
    let mut ids = CallIds::default();
    for message in messages {
        TemplateMessage::of(message, reasoning, tools, false, &mut ids);
    }
    ids.next
}

/// What a render reads besides the messages.
#[derive(Debug, Clone, Copy)]
pub struct TemplateInputs<'a> {
    /// Tools offered, in the list shape OpenAI sends (`tools::template_tools`).
    pub tools: Option<&'a [serde_json::Value]>,
    /// Whether the model is to reason (`enable_thinking`), where its template takes that.
    pub thinking: bool,
    /// More variables (`chat_template_kwargs`); the ones the render sets itself win.
    pub kwargs: &'a serde_json::Map<String, serde_json::Value>,
}

pub(crate) static NO_KWARGS: std::sync::LazyLock<serde_json::Map<String, serde_json::Value>> =
    std::sync::LazyLock::new(serde_json::Map::new);

impl Default for TemplateInputs<'_> {
    fn default() -> Self {
        TemplateInputs { tools: None, thinking: true, kwargs: &NO_KWARGS }
    }
}

/// What a template reads. `tools` only when offered: templates ask `tools is defined` as often
/// as `if tools`.
#[derive(Serialize)]
struct TemplateContext<'a> {
    messages: Vec<TemplateMessage<'a>>,
    add_generation_prompt: bool,
    bos_token: &'a str,
    eos_token: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a [serde_json::Value]>,
    /// Qwen3's switch (its template writes an empty reasoning block when it is false); templates
    /// that know none ignore it.
    enable_thinking: bool,
}

impl ChatTemplate {
    pub fn new(source: &str, bos_token: &str, eos_token: &str) -> Result<Self, TemplateError> {
        let mut env = Environment::new();
        env.set_fuel(Some(FUEL));
        // As Hugging Face's transformers and llama.cpp render chat templates: a line holding only
        // a block tag leaves no space or line break behind (Command R7B's rely on it).
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        minijinja_contrib::add_to_environment(&mut env);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", |msg: String| -> Result<String, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, msg))
        });
        // Today's date in the system prompt (Llama 3.x's, gpt-oss's), as llama.cpp gives it.
        env.add_function("strftime_now", |format: String| -> Result<String, minijinja::Error> {
            let mut out = String::new();
            write!(out, "{}", chrono::Local::now().format(&format))
                .map_err(|_| minijinja::Error::new(ErrorKind::InvalidOperation, format!("strftime_now cannot write {format:?}")))?;
            Ok(out)
        });
        env.add_template_owned("chat", source.to_owned()).map_err(|e| TemplateError(e.to_string()))?;
        Ok(ChatTemplate {
            env,
            bos_token: bos_token.into(),
            eos_token: eos_token.into(),
            reasoning: reasoning_format(source),
            tools: ToolFormat::of_template(source),
            lists_tools: crate::tools::reads_tools(source),
            think_markers: think_markers(source),
        })
    }

    /// Whether the template lists the tools offered; else they are described in a system
    /// message (in the template's own call format where it has one).
    pub fn lists_tools(&self) -> bool {
        self.lists_tools && self.tools.takes_tools()
    }

    /// The markers the template writes reasoning between, where they are not `<think>`'s: the
    /// model's are read as `<think>` and `</think>`, and a past reply's reasoning is given to the
    /// template apart (`reasoning_content`).
    pub fn think_markers(&self) -> Option<(&'static str, &'static str)> {
        self.think_markers
    }

    /// How the model this template is for reasons.
    pub fn reasoning(&self) -> ReasoningFormat {
        self.reasoning
    }

    /// How the template offers tools and writes their calls.
    pub fn tool_format(&self) -> ToolFormat {
        self.tools
    }

    /// The prompt for `messages`, ending with the opening of the assistant's turn.
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, TemplateError> {
        self.render_with(messages, TemplateInputs::default())
    }

    /// The same with `tools` offered, in the list shape OpenAI sends (`tools::template_tools`).
    pub fn render_with_tools(&self, messages: &[ChatMessage], tools: Option<&[serde_json::Value]>) -> Result<String, TemplateError> {
        self.render_with(messages, TemplateInputs { tools, ..TemplateInputs::default() })
    }

    /// The same with everything else a template may read.
    pub fn render_with(&self, messages: &[ChatMessage], inputs: TemplateInputs<'_>) -> Result<String, TemplateError> {
        let mut ids = CallIds::default();
        let apart = self.think_markers.is_some();
        let messages: Vec<_> = messages.iter().map(|m| TemplateMessage::of(m, self.reasoning, self.tools, apart, &mut ids)).collect();
        let template = self.env.get_template("chat").map_err(|e| TemplateError(e.to_string()))?;
        let mut out = CappedWriter(Vec::new());
        let context = TemplateContext {
            messages,
            add_generation_prompt: true,
            bos_token: &self.bos_token,
            eos_token: &self.eos_token,
            tools: inputs.tools,
            enable_thinking: inputs.thinking,
        };
        // The last map wins: what the render sets over the request's variables.
        let context = minijinja::value::merge_maps([Value::from_serialize(inputs.kwargs), Value::from_serialize(&context)]);
        let rendered = template.render_captured_to(context, &mut out);
        match rendered {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::OutOfFuel => {
                return Err(TemplateError("it ran too long (it may loop forever); choose another template in the Model settings".into()));
            }
            Err(e) if out.0.len() >= MAX_PROMPT_BYTES => {
                tracing::debug!(error = %e, "template output capped");
                return Err(TemplateError(format!(
                    "it wrote more than {} MB; choose another template in the Model settings",
                    MAX_PROMPT_BYTES >> 20
                )));
            }
            // The template author's own words (`raise_exception`), without minijinja's frame.
            Err(e) if e.kind() == ErrorKind::InvalidOperation && e.detail().is_some() => {
                return Err(TemplateError(e.detail().unwrap_or_default().to_owned()));
            }
            Err(e) => return Err(TemplateError(e.to_string())),
        }
        let prompt = String::from_utf8(out.0).map_err(|_| TemplateError("it wrote text that is not UTF-8".into()))?;
        if prompt.trim().is_empty() {
            return Err(TemplateError("it rendered an empty prompt; choose another template in the Model settings".into()));
        }
        Ok(prompt)
    }
}

/// `tojson` as chat templates were written for (Hugging Face's and llama.cpp's renderers):
/// Python's `json.dumps` layout (`", "` and `": "`; `indent` as it takes it), text as it is — not
/// minijinja's, which is compact and escapes `<`, `>`, `&` and `'` for HTML, so that a model
/// reads its tools as it was trained to and a call's arguments come back as written. A call's
/// arguments ([`RawJson`]) are written as the model wrote them.
fn tojson(value: &Value, indent: Option<Value>, kwargs: minijinja::value::Kwargs) -> Result<Value, minijinja::Error> {
    if let Some(raw) = value.downcast_object_ref::<RawJson>() {
        return Ok(Value::from_safe_string(raw.text.clone()));
    }
    let indent = match indent {
        Some(indent) => Some(indent),
        None => kwargs.get::<Option<Value>>("indent")?,
    };
    // Python's other arguments (`ensure_ascii`, `sort_keys`, `separators`) are taken and left:
    // templates pass them rarely, and the text stays valid JSON.
    for key in kwargs.args() {
        let _: Value = kwargs.get(key)?;
    }
    let indentation = match &indent {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => Some(match v.as_str() {
            Some(text) => text.to_owned(),
            None => " ".repeat(usize::try_from(v.clone())?),
        }),
    };
    let mut out = Vec::new();
    let written = match &indentation {
        Some(indentation) => {
            let formatter = serde_json::ser::PrettyFormatter::with_indent(indentation.as_bytes());
            value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, formatter))
        }
        None => write_json(value, &mut out),
    };
    written.map_err(|e| minijinja::Error::new(ErrorKind::InvalidOperation, "cannot serialize to JSON").with_source(e))?;
    let text = String::from_utf8(out).map_err(|_| minijinja::Error::new(ErrorKind::InvalidOperation, "JSON that is not UTF-8"))?;
    Ok(Value::from_safe_string(text))
}

/// `value` as Python's `json.dumps` writes it, a call's arguments ([`RawJson`]) within it as the
/// model wrote them (Mistral Nemo's template writes a call's whole function with `tojson`).
fn write_json(value: &Value, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    if let Some(raw) = value.downcast_object_ref::<RawJson>() {
        out.extend_from_slice(raw.text.as_bytes());
        return Ok(());
    }
    let (open, close) = match value.kind() {
        minijinja::value::ValueKind::Map => (b'{', b'}'),
        minijinja::value::ValueKind::Seq => (b'[', b']'),
        _ => return value.serialize(&mut serde_json::Serializer::with_formatter(out, PythonFormatter)),
    };
    out.push(open);
    for (i, item) in value.try_iter().into_iter().flatten().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        if open == b'[' {
            write_json(&item, out)?;
            continue;
        }
        // Python writes a key that is no text (a number) as text.
        let key = item.as_str().map_or_else(|| item.to_string(), str::to_owned);
        serde_json::to_writer(&mut *out, &key)?;
        out.extend_from_slice(b": ");
        write_json(&value.get_item(&item).unwrap_or_default(), out)?;
    }
    out.push(close);
    Ok(())
}

/// Python's `json.dumps` separators: `", "` between items, `": "` after a key.
struct PythonFormatter;

impl serde_json::ser::Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// A past call's arguments: read as the object they are, written by `tojson` as the text the
/// model wrote.
#[derive(Debug)]
struct RawJson {
    text: String,
    value: Value,
}

impl RawJson {
    fn value(text: &str) -> Value {
        let value: Value = serde_json::from_str(text).unwrap_or_default();
        Value::from_object(RawJson { text: text.to_owned(), value })
    }
}

impl minijinja::value::Object for RawJson {
    fn repr(self: &std::sync::Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Map
    }

    fn get_value(self: &std::sync::Arc<Self>, key: &Value) -> Option<Value> {
        self.value.get_item(key).ok().filter(|v| !v.is_undefined())
    }

    fn enumerate(self: &std::sync::Arc<Self>) -> minijinja::value::Enumerator {
        minijinja::value::Enumerator::Values(self.value.try_iter().map(Iterator::collect).unwrap_or_default())
    }
}

/// Collects a template's output, refusing to grow past [`MAX_PROMPT_BYTES`].
struct CappedWriter(Vec<u8>);

impl Write for CappedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MAX_PROMPT_BYTES {
            self.0.extend_from_slice(&buf[..MAX_PROMPT_BYTES - self.0.len()]);
            return Err(std::io::Error::other("the prompt is too long"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The reasoning markers of a template's own (Command R7B's), if it writes them.
fn think_markers(source: &str) -> Option<(&'static str, &'static str)> {
    let (open, close) = crate::tools::COMMAND_R_THINKING;
    (source.contains(open) && source.contains(close)).then_some((open, close))
}

#[cfg(test)]
mod tests;
