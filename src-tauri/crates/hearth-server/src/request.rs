//! A chat completion request as OpenAI spells it (and llama.cpp's server, whose extra sampling
//! fields are taken as it takes them), read strictly: an unknown field, a wrong type or a value
//! out of range is a 400 that names the field — never ignored, never guessed.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use hearth_core::{BiasTarget, ChatMessage, Constraint, LogitBias, MAX_TOP_LOGPROBS, Mirostat, Role, SamplerStage, SamplingParams};

use crate::error::ApiError;

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
    // llama.cpp's server's fields.
    top_k: Option<u32>,
    min_p: Option<f32>,
    typical_p: Option<f32>,
    top_n_sigma: Option<f32>,
    xtc_probability: Option<f32>,
    xtc_threshold: Option<f32>,
    dynatemp_range: Option<f32>,
    dynatemp_exponent: Option<f32>,
    dry_multiplier: Option<f32>,
    dry_base: Option<f32>,
    dry_allowed_length: Option<u32>,
    dry_penalty_last_n: Option<i32>,
    dry_sequence_breakers: Option<Vec<String>>,
    mirostat: Option<u8>,
    mirostat_tau: Option<f32>,
    mirostat_eta: Option<f32>,
    repeat_penalty: Option<f32>,
    repeat_last_n: Option<i32>,
    ignore_eos: Option<bool>,
    samplers: Option<Vec<String>>,
    grammar: Option<String>,
    json_schema: Option<Value>,
    /// Hearth always reuses what it can of the cache, and reuse never changes a reply.
    #[allow(dead_code)]
    cache_prompt: Option<bool>,
    /// Anything else: refused by name.
    #[serde(flatten)]
    unknown: Map<String, Value>,
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
    content: Option<Content>,
    /// A participant's name: OpenAI's models may read it; a chat template has nowhere to put it.
    name: Option<String>,
    #[serde(flatten)]
    unknown: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

/// OpenAI allows at most this many stop sequences; llama.cpp takes more, so we do too.
const MAX_STOPS: usize = 16;

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
        let request: ChatRequest = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let param = (path != ".").then_some(path);
            ApiError::invalid(param.as_deref(), e.into_inner().to_string())
        })?;
        if let Some(field) = request.unknown.keys().next() {
            return Err(ApiError::invalid(Some(field), format!("unknown field `{field}`: Hearth does not take it")));
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
        let breakers = self.dry_sequence_breakers.as_deref().unwrap_or_default();
        // (field, its size, its cap, what is counted)
        let mut sizes = vec![
            ("model".to_owned(), self.model.len(), caps::NAME, "bytes"),
            ("user".to_owned(), self.user.as_ref().map_or(0, String::len), caps::NAME, "bytes"),
            ("stop".to_owned(), stops.iter().map(String::len).max().unwrap_or(0), caps::STOP, "bytes in a stop sequence"),
            ("logit_bias".to_owned(), bias_entries, caps::LOGIT_BIAS, "entries"),
            ("dry_sequence_breakers".to_owned(), breakers.len(), caps::BREAKERS, "entries"),
            ("dry_sequence_breakers".to_owned(), breakers.iter().map(String::len).max().unwrap_or(0), caps::BREAKER, "bytes in an entry"),
            ("samplers".to_owned(), self.samplers.as_ref().map_or(0, Vec::len), caps::SAMPLERS, "entries"),
            ("grammar".to_owned(), self.grammar.as_ref().map_or(0, String::len), caps::GRAMMAR, "bytes"),
            ("json_schema".to_owned(), schema, caps::GRAMMAR, "bytes"),
        ];
        for (i, message) in self.messages.iter().enumerate() {
            sizes.push((format!("messages[{i}].name"), message.name.as_ref().map_or(0, String::len), caps::NAME, "bytes"));
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
        set(&mut s.min_p, self.min_p);
        set(&mut s.typical_p, self.typical_p);
        set(&mut s.top_n_sigma, self.top_n_sigma);
        set(&mut s.xtc_probability, self.xtc_probability);
        set(&mut s.xtc_threshold, self.xtc_threshold);
        set(&mut s.dynatemp_range, self.dynatemp_range);
        set(&mut s.dynatemp_exponent, self.dynatemp_exponent);
        set(&mut s.dry_multiplier, self.dry_multiplier);
        set(&mut s.dry_base, self.dry_base);
        set(&mut s.mirostat_tau, self.mirostat_tau);
        set(&mut s.mirostat_eta, self.mirostat_eta);
        set(&mut s.repeat_penalty, self.repeat_penalty);
        s.top_k = self.top_k.unwrap_or(s.top_k);
        s.dry_allowed_length = self.dry_allowed_length.unwrap_or(s.dry_allowed_length);
        s.dry_last_n = self.dry_penalty_last_n.unwrap_or(s.dry_last_n);
        s.repeat_last_n = self.repeat_last_n.unwrap_or(s.repeat_last_n);
        s.ignore_eos = self.ignore_eos.unwrap_or(s.ignore_eos);
        if let Some(breakers) = &self.dry_sequence_breakers {
            s.dry_sequence_breakers = breakers.clone();
        }
        if let Some(mirostat) = self.mirostat {
            s.mirostat = match mirostat {
                0 => Mirostat::Off,
                1 => Mirostat::V1,
                2 => Mirostat::V2,
                _ => return refuse("mirostat", format!("mirostat must be 0 (off), 1 or 2, got {mirostat}")),
            };
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
        if let Some(names) = &self.samplers {
            s.sampler_order = names.iter().map(|name| sampler(name)).collect::<Result<_, _>>()?;
        }
        if let Some(constraint) = self.constraint()? {
            s.constraint = Some(constraint);
        }
        s.validate().map_err(|e| {
            let param = wire_name(e.field);
            ApiError::invalid(Some(&param), format!("{param} must be {}, got {}", e.range, e.value))
        })?;
        Ok(s)
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
        for field in ["suffix", "messages", "top_logprobs"] {
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
            "assistant" => Role::Assistant,
            other => {
                return Err(ApiError::invalid(
                    Some(&param("role")),
                    format!("the role `{other}` is not supported: use system, developer, user or assistant"),
                ));
            }
        };
        let content = match &self.content {
            None => String::new(),
            Some(Content::Text(text)) => text.clone(),
            Some(Content::Parts(parts)) => {
                let mut text = String::new();
                for part in parts {
                    match (part.kind.as_str(), &part.text) {
                        ("text", Some(t)) => text.push_str(t),
                        (kind, _) => {
                            return Err(ApiError::invalid(
                                Some(&param("content")),
                                format!("a `{kind}` part cannot be read by this model: send text"),
                            ));
                        }
                    }
                }
                text
            }
        };
        Ok(ChatMessage::new(role, content))
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

/// A sampler stage by llama.cpp's server's name for it.
fn sampler(name: &str) -> Result<SamplerStage, ApiError> {
    SamplerStage::DEFAULT_ORDER.into_iter().find(|&stage| hearth_providers::llama_cpp_sampler_name(stage) == name).ok_or_else(|| {
        let names: Vec<&str> = SamplerStage::DEFAULT_ORDER.into_iter().map(hearth_providers::llama_cpp_sampler_name).collect();
        ApiError::invalid(Some("samplers"), format!("`{name}` is not a sampler: use {}", names.join(", ")))
    })
}

/// The wire name of a setting that Hearth names in camelCase (`topP` → `top_p`).
fn wire_name(field: &str) -> String {
    match field {
        "dryLastN" => "dry_penalty_last_n".into(),
        "samplerOrder" => "samplers".into(),
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
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<ChatRequest, ApiError> {
        ChatRequest::parse(body.as_bytes())
    }

    const HELLO: &str = r#""model":"m","messages":[{"role":"user","content":"hi"}]"#;

    fn sampling(fields: &str) -> Result<SamplingParams, ApiError> {
        parse(&format!("{{{HELLO}{fields}}}"))?.sampling(&SamplingParams::default())
    }

    /// What each refused request is refused for: the field OpenAI's clients show, with a reason.
    #[test]
    fn a_bad_request_is_refused_with_the_field_at_fault() {
        let cases: &[(&str, Option<&str>)] = &[
            ("{", None),
            ("[1]", None),
            (r#"{"messages":[]}"#, None),
            (&format!("{{{HELLO},\"temperature\":\"hot\"}}"), Some("temperature")),
            (&format!("{{{HELLO},\"frobnicate\":1}}"), Some("frobnicate")),
            (&format!("{{{HELLO},\"top_p\":2}}"), Some("top_p")),
            (&format!("{{{HELLO},\"dry_penalty_last_n\":-5}}"), Some("dry_penalty_last_n")),
            (&format!("{{{HELLO},\"n\":3}}"), Some("n")),
            (&format!("{{{HELLO},\"top_logprobs\":2}}"), Some("top_logprobs")),
            (&format!("{{{HELLO},\"logprobs\":true,\"top_logprobs\":21}}"), Some("top_logprobs")),
            (&format!("{{{HELLO},\"seed\":-7}}"), Some("seed")),
            (&format!("{{{HELLO},\"mirostat\":3}}"), Some("mirostat")),
            (&format!("{{{HELLO},\"samplers\":[\"top_k\",\"magic\"]}}"), Some("samplers")),
            (&format!("{{{HELLO},\"logit_bias\":{{\"abc\":1}}}}"), Some("logit_bias")),
            (&format!("{{{HELLO},\"max_tokens\":0}}"), Some("max_tokens")),
            (&format!("{{{HELLO},\"grammar\":\"root ::= x\",\"json_schema\":{{}}}}"), Some("grammar")),
            (r#"{"model":"m","messages":[{"role":"tool","content":"x"}]}"#, Some("messages[0].role")),
            (r#"{"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]}"#, Some("messages[0].content")),
            (r#"{"model":"m","messages":[{"role":"user","content":"x","tool_calls":[]}]}"#, Some("messages[0].tool_calls")),
            (r#"{"model":"m","messages":[]}"#, Some("messages")),
        ];
        // Past a cap: refused by name, whatever the field holds.
        let long = "x".repeat(70 << 10);
        let bias: Vec<String> = (0..1025).map(|id| format!("\"{id}\":1")).collect();
        let breakers: Vec<String> = (0..65).map(|i| format!("\"{i}\"")).collect();
        let capped = [
            (format!(r#"{{"model":"{}","messages":[{{"role":"user","content":"hi"}}]}}"#, &long[..257]), "model"),
            (format!("{{{HELLO},\"user\":\"{}\"}}", &long[..257]), "user"),
            (format!("{{{HELLO},\"stop\":[\"a\",\"{}\"]}}", &long[..1025]), "stop"),
            (format!("{{{HELLO},\"logit_bias\":{{{}}}}}", bias.join(",")), "logit_bias"),
            (format!("{{{HELLO},\"dry_sequence_breakers\":[{}]}}", breakers.join(",")), "dry_sequence_breakers"),
            (format!("{{{HELLO},\"grammar\":\"{long}\"}}"), "grammar"),
            (format!("{{{HELLO},\"json_schema\":{{\"description\":\"{long}\"}}}}"), "json_schema"),
            (
                format!(
                    r#"{{"model":"m","response_format":{{"type":"json_schema","json_schema":{{"schema":{{"title":"{long}"}}}}}},"messages":[]}}"#
                ),
                "json_schema",
            ),
            (format!(r#"{{"model":"m","messages":[{{"role":"user","content":"hi","name":"{}"}}]}}"#, &long[..257]), "messages[0].name"),
        ];
        let capped: Vec<(&str, Option<&str>)> = capped.iter().map(|(body, param)| (body.as_str(), Some(*param))).collect();
        let cases = [cases, &capped[..]].concat();
        let cases = &cases[..];
        for (body, param) in cases {
            let got =
                parse(body).and_then(|r| r.messages().and_then(|_| r.logprobs()).and_then(|_| r.sampling(&SamplingParams::default())));
            let error = got.expect_err(body);
            assert_eq!((error.status, error.param.as_deref()), (400, *param), "{body}: {error:?}");
            assert!(!error.message.is_empty());
        }
    }

    #[test]
    fn openai_and_llama_cpp_fields_reach_the_sampling_settings() {
        let s = sampling(
            r#","temperature":0.2,"top_p":0.5,"max_completion_tokens":7,"seed":42,"stop":"END","top_k":5,"min_p":0.1,
               "mirostat":2,"repeat_penalty":1.1,"dry_penalty_last_n":-1,"samplers":["top_k","temperature"],
               "logit_bias":{"15":-100,"16":2.5},"response_format":{"type":"json_object"},"user":"me","cache_prompt":true"#,
        )
        .unwrap();
        assert_eq!((s.temperature, s.top_p, s.max_tokens, s.seed, s.top_k, s.min_p), (0.2, 0.5, 7, Some(42), 5, 0.1));
        assert_eq!((s.mirostat, s.repeat_penalty, s.dry_last_n), (Mirostat::V2, 1.1, -1));
        assert_eq!(s.stop, ["END"]);
        assert_eq!(s.sampler_order, [SamplerStage::TopK, SamplerStage::Temperature]);
        assert_eq!(s.logit_bias[0], LogitBias { target: BiasTarget::Token { id: 15 }, bias: -100.0 });
        assert_eq!(s.constraint, Some(Constraint::JsonSchema(r#"{"type":"object"}"#.into())));
        // llama.cpp's pair list, with `false` for "never".
        let s = sampling(r#","logit_bias":[[" the",false],[7,1.5]],"seed":-1,"n_predict":9"#).unwrap();
        assert_eq!(s.logit_bias[0], LogitBias { target: BiasTarget::Text { text: " the".into() }, bias: LogitBias::BAN });
        assert_eq!((s.seed, s.max_tokens), (None, 9));
        // What is not set stays as the base has it.
        assert_eq!(sampling("").unwrap(), SamplingParams::default());
    }

    #[test]
    fn messages_take_text_in_either_form_and_known_roles() {
        let request = parse(
            r#"{"model":"m","messages":[{"role":"developer","content":"Be brief."},
                {"role":"user","name":"ann","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]},
                {"role":"assistant","content":null}]}"#,
        )
        .unwrap();
        assert_eq!(
            request.messages().unwrap(),
            [ChatMessage::new(Role::System, "Be brief."), ChatMessage::new(Role::User, "Hi there"), ChatMessage::new(Role::Assistant, "")]
        );
    }

    #[test]
    fn a_completion_takes_one_prompt_its_own_fields_and_a_chats_sampling_fields() {
        let parsed =
            CompletionRequest::parse(br#"{"model":"m","prompt":["Once upon"],"logprobs":2,"temperature":0.1,"echo":false}"#).unwrap();
        assert_eq!((parsed.prompt.as_str(), parsed.logprobs), ("Once upon", Some(2)));
        let sampling = parsed.chat.sampling(&SamplingParams::default()).unwrap();
        assert_eq!((sampling.temperature, sampling.max_tokens), (0.1, DEFAULT_COMPLETION_TOKENS));
        let cases: &[(&str, Option<&str>)] = &[
            (r#"{"model":"m"}"#, Some("prompt")),
            (r#"{"model":"m","prompt":["a","b"]}"#, Some("prompt")),
            (r#"{"model":"m","prompt":7}"#, Some("prompt")),
            (r#"{"model":"m","prompt":"a","echo":true}"#, Some("echo")),
            (r#"{"model":"m","prompt":"a","suffix":"z"}"#, Some("suffix")),
            (r#"{"model":"m","prompt":"a","logprobs":6}"#, Some("logprobs")),
            (r#"{"model":"m","prompt":"a","messages":[]}"#, Some("messages")),
            (r#"{"model":"m","prompt":"a","top_p":3}"#, None),
            (r#"{"model":"m","prompt":"a","frobnicate":1}"#, Some("frobnicate")),
        ];
        for (body, param) in cases {
            let error = CompletionRequest::parse(body.as_bytes())
                .and_then(|r| r.chat.sampling(&SamplingParams::default()).map(|_| ()))
                .expect_err(body);
            if param.is_some() {
                assert_eq!(error.param.as_deref(), *param, "{body}: {error:?}");
            }
            assert_eq!(error.status, 400, "{body}");
        }
    }

    #[test]
    fn hearth_field_names_are_spelled_as_on_the_wire() {
        for (field, wire) in
            [("topP", "top_p"), ("maxTokens", "max_tokens"), ("dryLastN", "dry_penalty_last_n"), ("temperature", "temperature")]
        {
            assert_eq!(wire_name(field), wire);
        }
    }
}
