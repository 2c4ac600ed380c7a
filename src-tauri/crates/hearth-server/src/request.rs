//! A chat completion request as OpenAI spells it (and llama.cpp's server, whose extra sampling
//! fields are taken as it takes them), read strictly: an unknown field, a wrong type or a value
//! out of range is a 400 that names the field — never ignored, never guessed.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use hearth_core::{BiasTarget, ChatMessage, Constraint, LogitBias, MAX_TOP_LOGPROBS, OfferedTools, Role, SamplingParams};

use hearth_providers::llama_fields::LlamaField;

use crate::error::ApiError;

mod content;
mod tools;

#[derive(Debug, Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<WireMessage>,
    #[serde(default)]
    pub stream: bool,
    pub stream_options: Option<StreamOptions>,
    max_tokens: Option<u32>,
    max_completion_tokens: Option<u32>,
    /// llama.cpp's name for the same; -1: no limit of its own.
    n_predict: Option<i32>,
    temperature: Option<f32>,
    top_p: Option<f32>,
    presence_penalty: Option<f32>,
    frequency_penalty: Option<f32>,
    /// OpenAI's is any integer; llama.cpp's -1 means "random".
    seed: Option<i64>,
    stop: Option<Stop>,
    logit_bias: Option<Value>,
    n: Option<u32>,
    /// An end user's id, for the caller's own records: nothing to do with the reply.
    user: Option<String>,
    response_format: Option<ResponseFormat>,
    logprobs: Option<bool>,
    top_logprobs: Option<u32>,
    // llama.cpp's server's fields: its constraints here, its sampling fields in `llama`.
    grammar: Option<String>,
    json_schema: Option<Value>,
    tools: Option<Vec<tools::WireTool>>,
    tool_choice: Option<Value>,
    parallel_tool_calls: Option<bool>,
    /// Hearth always reuses what it can of the cache, and reuse never changes a reply.
    #[allow(dead_code)]
    cache_prompt: Option<bool>,
    /// llama.cpp's server's: whether a reply's leading reasoning block is answered apart as
    /// `reasoning_content` (`auto`, `deepseek`: the default) or left in the content (`none`).
    reasoning_format: Option<ReasoningFormat>,
    /// llama.cpp's server's: values for the chat template (`enable_thinking` false: the
    /// reasoning budget is 0).
    chat_template_kwargs: Option<Map<String, Value>>,
    /// OpenAI's; `"none"` asks the model not to reason (as llama.cpp's server reads it), the others
    /// reach a template that takes them (gpt-oss's). A budget in tokens is llama.cpp's
    /// `reasoning_budget_tokens`.
    reasoning_effort: Option<String>,
    /// Anything else: llama.cpp's sampling fields (`hearth_providers::llama_fields`), taken out
    /// into `llama`; the rest refused by name.
    #[serde(flatten)]
    unknown: Map<String, Value>,
    #[serde(skip)]
    llama: Vec<(&'static LlamaField, Value)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ReasoningFormat {
    None,
    Auto,
    Deepseek,
}

#[derive(Debug, Deserialize)]
pub struct StreamOptions {
    #[serde(default)]
    pub include_usage: bool,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Stop {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResponseFormat {
    Text,
    JsonObject,
    JsonSchema { json_schema: JsonSchemaFormat },
}

#[derive(Debug, Deserialize)]
struct JsonSchemaFormat {
    schema: Value,
}

#[derive(Debug, Deserialize)]
pub struct WireMessage {
    role: String,
    content: Option<content::Content>,
    /// A participant's name: OpenAI's models may read it; a chat template has nowhere to put it.
    name: Option<String>,
    /// An assistant's calls.
    tool_calls: Option<Vec<tools::WireToolCall>>,
    /// An assistant's reasoning, apart from its content (as Hearth's and llama.cpp's servers
    /// answer it): the model's template reads it as the reply's leading reasoning block.
    reasoning_content: Option<String>,
    /// A tool message's call (the model reads results in order: nothing to match it with).
    #[allow(dead_code)]
    tool_call_id: Option<String>,
    #[serde(flatten)]
    unknown: Map<String, Value>,
}

/// OpenAI allows at most this many stop sequences; llama.cpp takes more, so we do too.
const MAX_STOPS: usize = 16;
/// The reasoning efforts OpenAI's API knows, besides "none".
const REASONING_EFFORTS: [&str; 4] = ["minimal", "low", "medium", "high"];
/// Template variables the request's own fields write.
const SET_BY_THE_REQUEST: [&str; 6] = ["messages", "tools", "add_generation_prompt", "bos_token", "eos_token", "enable_thinking"];
const MAX_TEMPLATE_KWARGS_BYTES: usize = 64 << 10;

/// Caps on what a request holds besides its messages' text, each refused by name before any of
/// it is stored, logged, shown in the window or handed to a sampler. Far above any real use.
mod caps {
    /// `model`, `user`, a message's `name`: names, kept in the request log.
    pub const NAME: usize = 256;
    pub const STOP: usize = 1024;
    pub const LOGIT_BIAS: usize = 1024;
    pub const BREAKERS: usize = 64;
    pub const BREAKER: usize = 64;
    pub const SAMPLERS: usize = 32;
    /// A GBNF grammar or a JSON schema, in bytes.
    pub const GRAMMAR: usize = 64 << 10;
}

impl ChatRequest {
    /// Reads a request body: malformed JSON, a field of the wrong type or an unknown field is
    /// refused with the field's name.
    pub fn parse(body: &[u8]) -> Result<ChatRequest, ApiError> {
        ChatRequest::from_value(json_object(body)?)
    }

    fn from_value(value: Value) -> Result<ChatRequest, ApiError> {
        let mut request: ChatRequest = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let param = (path != ".").then_some(path);
            ApiError::invalid(param.as_deref(), e.into_inner().to_string())
        })?;
        for (name, value) in std::mem::take(&mut request.unknown) {
            match LlamaField::named(&name) {
                // `null`: not set, as OpenAI's fields take it.
                Some(field) => {
                    if !value.is_null() {
                        request.llama.push((field, value));
                    }
                }
                None => return Err(ApiError::invalid(Some(&name), format!("unknown field `{name}`: Hearth does not take it"))),
            }
        }
        request.check_sizes()?;
        Ok(request)
    }

    /// Every field within its cap (`caps`); the first past it is refused by name.
    fn check_sizes(&self) -> Result<(), ApiError> {
        let stops: &[String] = match &self.stop {
            Some(Stop::Many(stops)) => stops,
            Some(Stop::One(stop)) => std::slice::from_ref(stop),
            None => &[],
        };
        let bias_entries = match &self.logit_bias {
            Some(Value::Object(map)) => map.len(),
            Some(Value::Array(pairs)) => pairs.len(),
            _ => 0,
        };
        let schema = match (&self.json_schema, &self.response_format) {
            (Some(schema), _) | (_, Some(ResponseFormat::JsonSchema { json_schema: JsonSchemaFormat { schema } })) => {
                schema.to_string().len()
            }
            _ => 0,
        };
        let list = |name: &str| self.llama.iter().find(|(field, _)| field.name == name).and_then(|(_, v)| v.as_array());
        let breakers = list("dry_sequence_breakers").map_or(&[][..], Vec::as_slice);
        let longest = |items: &[Value]| items.iter().filter_map(Value::as_str).map(str::len).max().unwrap_or(0);
        // (field, its size, its cap, what is counted)
        let mut sizes = vec![
            ("model".to_owned(), self.model.len(), caps::NAME, "bytes"),
            ("user".to_owned(), self.user.as_ref().map_or(0, String::len), caps::NAME, "bytes"),
            ("stop".to_owned(), stops.iter().map(String::len).max().unwrap_or(0), caps::STOP, "bytes in a stop sequence"),
            ("logit_bias".to_owned(), bias_entries, caps::LOGIT_BIAS, "entries"),
            ("dry_sequence_breakers".to_owned(), breakers.len(), caps::BREAKERS, "entries"),
            ("dry_sequence_breakers".to_owned(), longest(breakers), caps::BREAKER, "bytes in an entry"),
            ("samplers".to_owned(), list("samplers").map_or(0, Vec::len), caps::SAMPLERS, "entries"),
            ("grammar".to_owned(), self.grammar.as_ref().map_or(0, String::len), caps::GRAMMAR, "bytes"),
            ("json_schema".to_owned(), schema, caps::GRAMMAR, "bytes"),
        ];
        for (i, message) in self.messages.iter().enumerate() {
            sizes.push((format!("messages[{i}].name"), message.name.as_ref().map_or(0, String::len), caps::NAME, "bytes"));
            sizes.push((format!("messages[{i}].tool_call_id"), message.tool_call_id.as_ref().map_or(0, String::len), caps::NAME, "bytes"));
        }
        match sizes.into_iter().find(|(_, size, cap, _)| size > cap) {
            Some((field, size, cap, what)) => {
                Err(ApiError::invalid(Some(&field), format!("`{field}` holds {size} {what}, more than the {cap} Hearth takes")))
            }
            None => Ok(()),
        }
    }

    /// The conversation in Hearth's terms.
    pub fn messages(&self) -> Result<Vec<ChatMessage>, ApiError> {
        if self.messages.is_empty() {
            return Err(ApiError::invalid(Some("messages"), "`messages` is empty: send at least one message"));
        }
        self.messages.iter().enumerate().map(|(i, m)| m.to_chat(i)).collect()
    }

    /// The tools the reply may call; `None` when the request offers none.
    pub fn tools(&self) -> Result<Option<OfferedTools>, ApiError> {
        tools::offered(self.tools.as_deref(), self.tool_choice.as_ref(), self.parallel_tool_calls)
    }

    /// `base` with what the request sets; validated, so a value out of range is refused by name.
    pub fn sampling(&self, base: &SamplingParams) -> Result<SamplingParams, ApiError> {
        let refuse = |param: &str, message: String| Err(ApiError::invalid(Some(param), message));
        if self.n.is_some_and(|n| n != 1) {
            return refuse("n", "only one choice per request (`n` = 1): send the request again for another".into());
        }
        let mut s = base.clone();
        if let Some(max) = self.max_completion_tokens.or(self.max_tokens).or(self.n_predict.and_then(|n| u32::try_from(n).ok())) {
            s.max_tokens = max;
        }
        let set = |target: &mut f32, value: Option<f32>| {
            if let Some(v) = value {
                *target = v;
            }
        };
        set(&mut s.temperature, self.temperature);
        set(&mut s.top_p, self.top_p);
        set(&mut s.presence_penalty, self.presence_penalty);
        set(&mut s.frequency_penalty, self.frequency_penalty);
        for (field, value) in &self.llama {
            field.read(&mut s, value).map_err(|why| ApiError::invalid(Some(field.name), format!("`{}` {why}", field.name)))?;
        }
        match self.seed {
            None => {}
            Some(-1) => s.seed = None,
            Some(seed) => match u32::try_from(seed) {
                Ok(seed) => s.seed = Some(seed),
                Err(_) => return refuse("seed", format!("seed must be -1 (random) or between 0 and 4294967295, got {seed}")),
            },
        }
        match &self.stop {
            None => {}
            Some(Stop::One(stop)) => s.stop = vec![stop.clone()],
            Some(Stop::Many(stops)) if stops.len() > MAX_STOPS => {
                return refuse("stop", format!("at most {MAX_STOPS} stop sequences, got {}", stops.len()));
            }
            Some(Stop::Many(stops)) => s.stop = stops.clone(),
        }
        if let Some(bias) = &self.logit_bias {
            s.logit_bias = logit_bias(bias)?;
        }
        if let Some(constraint) = self.constraint()? {
            s.constraint = Some(constraint);
        }
        if !self.thinking()? {
            s.reasoning_budget = 0;
        }
        s.validate().map_err(|e| {
            let param = wire_name(e.field);
            ApiError::invalid(Some(&param), format!("{param} must be {}, got {}", e.range, e.value))
        })?;
        Ok(s)
    }

    /// Whether the model may reason, as `chat_template_kwargs.enable_thinking` and
    /// `reasoning_effort` say (`"none"`: not at all).
    fn thinking(&self) -> Result<bool, ApiError> {
        let mut thinking = true;
        match self.chat_template_kwargs.as_ref().and_then(|kwargs| kwargs.get("enable_thinking")) {
            None => {}
            Some(Value::Bool(on)) => thinking &= *on,
            Some(_) => {
                let param = "chat_template_kwargs.enable_thinking";
                return Err(ApiError::invalid(Some(param), format!("`{param}` must be true or false")));
            }
        }
        match self.reasoning_effort.as_deref() {
            None => {}
            Some("none") => thinking = false,
            Some(effort) if REASONING_EFFORTS.contains(&effort) => {}
            Some(other) => {
                return Err(ApiError::invalid(
                    Some("reasoning_effort"),
                    format!(
                        "reasoning_effort must be one of \"none\", {}, got {other:?}; `reasoning_budget_tokens` caps reasoning in tokens",
                        REASONING_EFFORTS.map(|e| format!("{e:?}")).join(", ")
                    ),
                ));
            }
        }
        Ok(thinking)
    }

    /// What the model's chat template reads besides the messages, as llama.cpp's server passes
    /// it: `chat_template_kwargs` (its `enable_thinking` is the reasoning budget's), and
    /// `reasoning_effort` for a template that takes it (gpt-oss's).
    pub fn template_kwargs(&self) -> Result<Map<String, Value>, ApiError> {
        let mut kwargs = self.chat_template_kwargs.clone().unwrap_or_default();
        kwargs.remove("enable_thinking");
        if let Some(key) = kwargs.keys().find(|key| SET_BY_THE_REQUEST.contains(&key.as_str())) {
            let param = format!("chat_template_kwargs.{key}");
            return Err(ApiError::invalid(Some(&param), format!("`{param}` is written from the request itself, never by a client")));
        }
        if serde_json::to_vec(&kwargs).map_or(0, |bytes| bytes.len()) > MAX_TEMPLATE_KWARGS_BYTES {
            return Err(ApiError::invalid(
                Some("chat_template_kwargs"),
                format!("chat_template_kwargs may hold at most {} KiB", MAX_TEMPLATE_KWARGS_BYTES >> 10),
            ));
        }
        match self.reasoning_effort.as_deref() {
            None => {}
            Some("none") => _ = kwargs.remove("reasoning_effort"),
            Some(effort) => _ = kwargs.insert("reasoning_effort".into(), effort.into()),
        }
        Ok(kwargs)
    }

    /// Whether a reply's leading reasoning block is answered apart, as `reasoning_content`.
    pub fn reasoning_apart(&self) -> bool {
        self.reasoning_format != Some(ReasoningFormat::None)
    }

    /// How many alternatives each token's log-probability comes with; `None`: no log-probabilities.
    pub fn logprobs(&self) -> Result<Option<u32>, ApiError> {
        match (self.logprobs.unwrap_or(false), self.top_logprobs) {
            (_, Some(top)) if top > MAX_TOP_LOGPROBS => {
                Err(ApiError::invalid(Some("top_logprobs"), format!("top_logprobs must be between 0 and {MAX_TOP_LOGPROBS}, got {top}")))
            }
            (false, Some(_)) => Err(ApiError::invalid(Some("top_logprobs"), "top_logprobs needs `logprobs: true`")),
            (true, top) => Ok(Some(top.unwrap_or(0))),
            (false, None) => Ok(None),
        }
    }

    fn constraint(&self) -> Result<Option<Constraint>, ApiError> {
        let given = [
            self.grammar.is_some(),
            self.json_schema.is_some(),
            matches!(self.response_format, Some(ResponseFormat::JsonObject | ResponseFormat::JsonSchema { .. })),
        ];
        if given.iter().filter(|&&g| g).count() > 1 {
            return Err(ApiError::invalid(
                Some("grammar"),
                "give one of `grammar`, `json_schema` and a JSON `response_format`, not several",
            ));
        }
        Ok(match (&self.grammar, &self.json_schema, &self.response_format) {
            (Some(grammar), _, _) => Some(Constraint::Gbnf(grammar.clone())),
            (_, Some(schema), _) => Some(Constraint::JsonSchema(schema.to_string())),
            (_, _, Some(ResponseFormat::JsonObject)) => Some(Constraint::JsonSchema(r#"{"type":"object"}"#.into())),
            (_, _, Some(ResponseFormat::JsonSchema { json_schema })) => Some(Constraint::JsonSchema(json_schema.schema.to_string())),
            _ => None,
        })
    }
}

/// A request body: a JSON object.
fn json_object(body: &[u8]) -> Result<Value, ApiError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| ApiError::invalid(None, format!("the request body is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::invalid(None, "the request body must be a JSON object"));
    }
    Ok(value)
}

/// A completion request (`/v1/completions`): a prompt continued as it is, without the chat
/// template. Its sampling fields are a chat request's; what only this API has is read here.
#[derive(Debug)]
pub struct CompletionRequest {
    pub chat: ChatRequest,
    pub prompt: String,
    /// The legacy API's `logprobs`: how many alternatives (0 to 5) come with each token.
    pub logprobs: Option<u32>,
}

/// The legacy API's largest `logprobs`.
const MAX_LEGACY_LOGPROBS: u64 = 5;
/// OpenAI's default length of a completion.
const DEFAULT_COMPLETION_TOKENS: u32 = 16;

impl CompletionRequest {
    pub fn parse(body: &[u8]) -> Result<CompletionRequest, ApiError> {
        let mut value = json_object(body)?;
        let object = value.as_object_mut().expect("checked: an object");
        let refuse = |param: &str, message: &str| Err(ApiError::invalid(Some(param), message));
        let prompt = match object.remove("prompt") {
            Some(Value::String(prompt)) => prompt,
            Some(Value::Array(mut prompts)) if prompts.len() == 1 && prompts[0].is_string() => {
                prompts.remove(0).as_str().expect("checked: a string").to_owned()
            }
            Some(Value::Array(_)) => return refuse("prompt", "send one prompt per request"),
            Some(_) => return refuse("prompt", "the prompt must be text"),
            None => return refuse("prompt", "missing field `prompt`"),
        };
        for (field, harmless) in [("echo", json!(false)), ("best_of", json!(1))] {
            if object.remove(field).is_some_and(|v| v != harmless && !v.is_null()) {
                return refuse(field, &format!("`{field}` is not supported by Hearth's server"));
            }
        }
        for field in ["suffix", "messages", "top_logprobs", "tools", "tool_choice", "parallel_tool_calls"] {
            if object.get(field).is_some_and(|v| !v.is_null()) {
                return refuse(field, &format!("`{field}` is not a field of /v1/completions"));
            }
            object.remove(field);
        }
        let logprobs = match object.remove("logprobs") {
            None | Some(Value::Null) => None,
            Some(n) => match n.as_u64().filter(|&n| n <= MAX_LEGACY_LOGPROBS) {
                Some(n) => Some(n as u32),
                None => return refuse("logprobs", "logprobs must be a whole number between 0 and 5"),
            },
        };
        if !["max_tokens", "max_completion_tokens", "n_predict"].iter().any(|f| object.contains_key(*f)) {
            object.insert("max_tokens".into(), json!(DEFAULT_COMPLETION_TOKENS));
        }
        // The rest is read as a chat request's (the messages are a stand-in: the prompt replaces them).
        object.insert("messages".into(), json!([{ "role": "user", "content": "" }]));
        Ok(CompletionRequest { chat: ChatRequest::from_value(value)?, prompt, logprobs })
    }
}

impl WireMessage {
    fn to_chat(&self, index: usize) -> Result<ChatMessage, ApiError> {
        let param = |field: &str| format!("messages[{index}].{field}");
        if let Some(field) = self.unknown.keys().next() {
            return Err(ApiError::invalid(Some(&param(field)), format!("`{field}` in a message is not supported by Hearth's server")));
        }
        let role = match self.role.as_str() {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            // A tool's result: the engine reads it in the user's turn (`read_tools_locally`).
            "tool" => Role::Tool,
            "assistant" => Role::Assistant,
            other => {
                return Err(ApiError::invalid(
                    Some(&param("role")),
                    format!("the role `{other}` is not supported: use system, developer, user, assistant or tool"),
                ));
            }
        };
        if self.tool_calls.is_some() && role != Role::Assistant {
            return Err(ApiError::invalid(Some(&param("tool_calls")), "only an assistant's message holds tool calls"));
        }
        let (content, images) = content::read(self.content.as_ref(), role == Role::User, &param("content"))?;
        let content = match (&self.tool_calls, self.role.as_str()) {
            (Some(calls), _) => tools::with_calls(content, calls, param)?,
            (None, _) => content,
        };
        let content = match &self.reasoning_content {
            Some(_) if role != Role::Assistant => {
                return Err(ApiError::invalid(Some(&param("reasoning_content")), "only an assistant's message holds reasoning"));
            }
            Some(reasoning) => hearth_core::with_reasoning(reasoning, &content),
            None => content,
        };
        Ok(ChatMessage { images, ..ChatMessage::new(role, content) })
    }
}

/// OpenAI's `{"token id": bias}`, or llama.cpp's `[[token id or text, bias or false], …]`.
fn logit_bias(value: &Value) -> Result<Vec<LogitBias>, ApiError> {
    let refuse = |message: String| ApiError::invalid(Some("logit_bias"), message);
    let bias_of = |v: &Value| match v {
        Value::Bool(false) => Some(LogitBias::BAN),
        other => other.as_f64().map(|b| b as f32),
    };
    match value {
        Value::Object(map) => map
            .iter()
            .map(|(id, bias)| {
                let id: u32 = id.parse().map_err(|_| refuse(format!("`{id}` is not a token id")))?;
                let bias = bias_of(bias).ok_or_else(|| refuse(format!("the bias of token {id} is not a number")))?;
                Ok(LogitBias { target: BiasTarget::Token { id }, bias })
            })
            .collect(),
        Value::Array(pairs) => pairs
            .iter()
            .map(|pair| {
                let (target, bias) = match pair.as_array().map(Vec::as_slice) {
                    Some([target, bias]) => (target, bias),
                    _ => return Err(refuse(format!("{pair} is not a [token, bias] pair"))),
                };
                let target = match target {
                    Value::String(text) => BiasTarget::Text { text: text.clone() },
                    other => BiasTarget::Token {
                        id: other
                            .as_u64()
                            .and_then(|id| u32::try_from(id).ok())
                            .ok_or_else(|| refuse(format!("{other} is not a token")))?,
                    },
                };
                let bias = bias_of(bias).ok_or_else(|| refuse(format!("{bias} is not a bias")))?;
                Ok(LogitBias { target, bias })
            })
            .collect(),
        other => Err(refuse(format!("logit_bias must be an object of token ids or a list of pairs, got {other}"))),
    }
}

/// The wire name of a setting that Hearth names in camelCase (`topP` → `top_p`).
fn wire_name(field: &str) -> String {
    match field {
        "dryLastN" => "dry_penalty_last_n".into(),
        "samplerOrder" => "samplers".into(),
        "reasoningBudget" => "reasoning_budget_tokens".into(),
        _ => field.chars().fold(String::new(), |mut out, c| {
            if c.is_ascii_uppercase() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            out
        }),
    }
}

#[cfg(test)]
mod tests;
