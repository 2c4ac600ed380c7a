//! A chat request's tools as OpenAI spells them: `tools`, `tool_choice`, `parallel_tool_calls`,
//! an assistant message's `tool_calls` and a `tool` message's result. A local model reads the
//! calls and results as Hermes/Qwen text (`<tool_call>` and `<tool_response>` blocks), the format
//! the engine offers the tools in.

use serde::Deserialize;
use serde_json::Value;

use hearth_core::{OfferedTools, ToolChoice, ToolError, ToolSpec, call_block, check_tools};

use crate::error::ApiError;

/// One of `tools`: `{"type": "function", "function": {…}}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireTool {
    #[serde(rename = "type")]
    kind: String,
    function: WireFunction,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireFunction {
    name: String,
    description: Option<String>,
    parameters: Option<Value>,
    /// OpenAI's strict mode: the grammar keeps every call to the schema anyway.
    #[allow(dead_code)]
    strict: Option<bool>,
}

/// A call in an assistant message's `tool_calls`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireToolCall {
    #[allow(dead_code)]
    id: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    function: WireCalled,
    /// Present in streamed deltas a client may echo back.
    #[allow(dead_code)]
    index: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireCalled {
    name: String,
    /// JSON text, as OpenAI sends it.
    arguments: String,
}

/// At most this many tools in a request (OpenAI takes 128).
const MAX_TOOLS: usize = 128;
/// The tools' JSON, all told, in bytes: each becomes grammar, like a JSON schema.
const MAX_TOOLS_BYTES: usize = 64 << 10;

/// What the request offers: `None` when it offers no tools.
pub fn offered(tools: Option<&[WireTool]>, choice: Option<&Value>, parallel: Option<bool>) -> Result<Option<OfferedTools>, ApiError> {
    let choice = tool_choice(choice)?;
    let tools = tools.unwrap_or_default();
    if tools.len() > MAX_TOOLS {
        return Err(ApiError::invalid(Some("tools"), format!("at most {MAX_TOOLS} tools, got {}", tools.len())));
    }
    let mut specs = Vec::with_capacity(tools.len());
    let mut bytes = 0;
    for (i, tool) in tools.iter().enumerate() {
        if tool.kind != "function" {
            return Err(ApiError::invalid(
                Some(&format!("tools[{i}].type")),
                format!("a tool of type `{}`: only `function` is", tool.kind),
            ));
        }
        let parameters = tool.function.parameters.clone().unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
        bytes += parameters.to_string().len() + tool.function.description.as_ref().map_or(0, String::len);
        specs.push(ToolSpec {
            name: tool.function.name.clone(),
            description: tool.function.description.clone().unwrap_or_default(),
            parameters,
        });
    }
    if bytes > MAX_TOOLS_BYTES {
        return Err(ApiError::invalid(
            Some("tools"),
            format!("the tools hold {bytes} bytes, more than the {MAX_TOOLS_BYTES} Hearth takes"),
        ));
    }
    check_tools(&specs, &choice).map_err(|e| {
        let param = match e {
            ToolError::UnknownChoice(_) | ToolError::NothingToChoose(_) => "tool_choice",
            _ => "tools",
        };
        ApiError::invalid(Some(param), e.to_string())
    })?;
    if specs.is_empty() {
        return Ok(None);
    }
    Ok(Some(OfferedTools { tools: specs, choice, parallel: parallel.unwrap_or(true) }))
}

/// `"auto"`, `"none"`, `"required"` or `{"type": "function", "function": {"name": …}}`.
fn tool_choice(value: Option<&Value>) -> Result<ToolChoice, ApiError> {
    let refuse = || {
        ApiError::invalid(
            Some("tool_choice"),
            "tool_choice must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": …}}",
        )
    };
    match value {
        None | Some(Value::Null) => Ok(ToolChoice::Auto),
        Some(Value::String(word)) => match word.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "none" => Ok(ToolChoice::None),
            "required" => Ok(ToolChoice::Required),
            _ => Err(refuse()),
        },
        Some(Value::Object(named)) if named.get("type").and_then(Value::as_str) == Some("function") => named
            .get("function")
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .map(|n| ToolChoice::Named(n.to_owned()))
            .ok_or_else(refuse),
        Some(_) => Err(refuse()),
    }
}

/// An assistant message's text with its calls written after it as the model writes them (the
/// arguments as the client sends them back: as the server gave them, they match the cache).
pub fn with_calls(content: String, calls: &[WireToolCall], param: impl Fn(&str) -> String) -> Result<String, ApiError> {
    let mut text = content;
    for (i, call) in calls.iter().enumerate() {
        if call.kind.as_deref().is_some_and(|k| k != "function") {
            return Err(ApiError::invalid(Some(&param(&format!("tool_calls[{i}].type"))), "only `function` calls are"));
        }
        let arguments = call.function.arguments.trim();
        serde_json::from_str::<Value>(arguments).map_err(|e| {
            ApiError::invalid(Some(&param(&format!("tool_calls[{i}].function.arguments"))), format!("the arguments are not JSON: {e}"))
        })?;
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&call_block(&call.function.name, arguments));
    }
    Ok(text)
}
