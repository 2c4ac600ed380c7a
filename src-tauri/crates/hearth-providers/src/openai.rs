//! OpenAI's Chat Completions wire format, also spoken by llama.cpp's server, vLLM, Ollama,
//! LM Studio, Groq, OpenRouter and Mistral.

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use hearth_core::{
    BiasTarget, CALL_CLOSE, CALL_OPEN, CallTurn, ChatMessage, Constraint, FinishReason, MAX_TOP_LOGPROBS, OfferedTools, ProviderConfig,
    ProviderKind, ReasoningWriter, SamplingParams, TokenAlternative, TokenProbs, ToolChoice, call_turns,
};

use crate::Unsendable;
use crate::llama_fields;
use crate::stream::{Parser, Tally};

/// The streaming request body; `context_length` stands in for "the whole context" (-1), which
/// llama.cpp's server refuses for some fields. `Err` says in words why the settings cannot be sent.
pub fn body(
    config: &ProviderConfig,
    model: &str,
    messages: &[ChatMessage],
    s: &SamplingParams,
    continue_last: bool,
    context_length: u32,
    tools: Option<&OfferedTools>,
) -> Result<Value, Unsendable> {
    let official = config.kind == ProviderKind::OpenAi;
    let extensions = config.kind == ProviderKind::OpenAiCompatible && config.extensions;
    let mut wire = wire_messages(messages);
    if continue_last && official {
        // OpenAI answers a trailing assistant message anew; ask it to write on instead.
        // (llama.cpp's server and vLLM continue a trailing assistant message themselves.)
        wire.push(
            json!({ "role": "user", "content": "Continue your last message exactly where it stopped, without repeating any of it." }),
        );
    }
    let mut b = Map::new();
    b.insert("model".into(), json!(model));
    b.insert("messages".into(), Value::Array(wire));
    b.insert("stream".into(), json!(true));
    if official {
        b.insert("stream_options".into(), json!({ "include_usage": true }));
        b.insert("max_completion_tokens".into(), json!(s.max_tokens));
        if s.stop.len() > 4 {
            return Err(Unsendable(format!("{} takes at most 4 stop strings; this chat has {}", config.name, s.stop.len())));
        }
    } else {
        b.insert("max_tokens".into(), json!(s.max_tokens));
    }
    b.insert("temperature".into(), json!(s.temperature));
    b.insert("top_p".into(), json!(s.top_p));
    b.insert("presence_penalty".into(), json!(s.presence_penalty));
    b.insert("frequency_penalty".into(), json!(s.frequency_penalty));
    if let Some(seed) = s.seed {
        b.insert("seed".into(), json!(seed));
    }
    if !s.stop.is_empty() {
        b.insert("stop".into(), json!(s.stop));
    }
    if !s.logit_bias.is_empty() {
        b.insert("logit_bias".into(), logit_bias(config, s, extensions)?);
    }
    match &s.constraint {
        None => {}
        Some(Constraint::JsonSchema(schema)) => {
            let schema: Value = serde_json::from_str(schema).map_err(|e| Unsendable(format!("the JSON schema is not valid JSON: {e}")))?;
            b.insert("response_format".into(), json!({ "type": "json_schema", "json_schema": { "name": "reply", "schema": schema } }));
        }
        Some(Constraint::Gbnf(grammar)) if extensions => {
            b.insert("grammar".into(), json!(grammar));
        }
        Some(Constraint::Gbnf(_)) => {
            return Err(Unsendable(format!("{} cannot follow a GBNF grammar; use a JSON schema, or the local model", config.name)));
        }
    }
    let tools = tools.filter(|t| !t.tools.is_empty() && t.choice != ToolChoice::None);
    if let Some(offered) = tools {
        let functions: Vec<Value> = offered
            .tools
            .iter()
            .map(
                |t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": t.parameters } }),
            )
            .collect();
        b.insert("tools".into(), Value::Array(functions));
        b.insert(
            "tool_choice".into(),
            match &offered.choice {
                ToolChoice::Named(name) => json!({ "type": "function", "function": { "name": name } }),
                ToolChoice::Required => json!("required"),
                _ => json!("auto"),
            },
        );
        b.insert("parallel_tool_calls".into(), json!(offered.parallel));
    }
    if official && let Some(effort) = hearth_core::reasoning_effort(s.reasoning_budget) {
        b.insert("reasoning_effort".into(), json!(effort));
    }
    if extensions {
        llama_fields::write_all(&mut b, s, context_length);
        if s.reasoning_budget == 0 {
            // Its templates' switch (Qwen3's), as llama.cpp's server passes it on.
            b.insert("chat_template_kwargs".into(), json!({ "enable_thinking": false }));
        }
        // llama.cpp's server refuses logprobs with tools on a stream ("not supported").
        if s.top_probs > 0 && tools.is_none() {
            // For the token inspector. Not asked of OpenAI itself: its reasoning models refuse it.
            b.insert("logprobs".into(), json!(true));
            b.insert("top_logprobs".into(), json!(s.top_probs.min(MAX_TOP_LOGPROBS)));
        }
    }
    Ok(Value::Object(b))
}

fn logit_bias(config: &ProviderConfig, s: &SamplingParams, extensions: bool) -> Result<Value, Unsendable> {
    if extensions {
        // llama.cpp's server takes [token id or text, bias] pairs.
        let pairs = s.logit_bias.iter().map(|b| match &b.target {
            BiasTarget::Token { id } => json!([id, b.bias]),
            BiasTarget::Text { text } => json!([text, b.bias]),
        });
        return Ok(Value::Array(pairs.collect()));
    }
    let mut map = Map::new();
    for bias in &s.logit_bias {
        match &bias.target {
            BiasTarget::Token { id } => {
                map.insert(id.to_string(), json!(bias.bias.clamp(-100.0, 100.0)));
            }
            BiasTarget::Text { text } => {
                return Err(Unsendable(format!(
                    "{} takes logit biases by token id only, and {text:?} is text: give its token ids, or use the local model",
                    config.name
                )));
            }
        }
    }
    Ok(Value::Object(map))
}

/// The conversation as Chat Completions has it: a reply's calls (written in its text, as every
/// model's reply is kept) as `tool_calls`, each result as a `tool` message answering its call.
fn wire_messages(messages: &[ChatMessage]) -> Vec<Value> {
    call_turns(messages, "call")
        .into_iter()
        .map(|turn| match turn {
            CallTurn::Said(m) if m.images.is_empty() => json!({ "role": m.role.as_str(), "content": m.content }),
            CallTurn::Said(m) => {
                // Content parts: the images first, as the engine reads them, then the text.
                let images = m.images.iter().map(|image| json!({ "type": "image_url", "image_url": { "url": image.data_url() } }));
                let text = (!m.content.is_empty()).then(|| json!({ "type": "text", "text": m.content }));
                json!({ "role": m.role.as_str(), "content": images.chain(text).collect::<Vec<_>>() })
            }
            CallTurn::Calls { text, calls } => {
                let calls: Vec<Value> = calls
                    .into_iter()
                    .map(|(id, c)| json!({ "id": id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }))
                    .collect();
                let content = if text.is_empty() { Value::Null } else { json!(text) };
                json!({ "role": "assistant", "content": content, "tool_calls": calls })
            }
            CallTurn::Answer { call_id, content } => json!({ "role": "tool", "tool_call_id": call_id, "content": content }),
        })
        .collect()
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
    /// llama.cpp's server: what it reused from its cache and how fast it decoded.
    timings: Option<Timings>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
    logprobs: Option<ChoiceLogprobs>,
}

/// `logprobs.content`: each token of the chunk with the model's log-probability and the
/// likeliest tokens there (llama.cpp's server adds each token's id).
#[derive(Deserialize)]
struct ChoiceLogprobs {
    #[serde(default)]
    content: Vec<TokenLogprob>,
}

#[derive(Deserialize)]
struct TokenLogprob {
    id: Option<i32>,
    token: String,
    logprob: f64,
    #[serde(default)]
    top_logprobs: Vec<TopLogprob>,
}

#[derive(Deserialize)]
struct TopLogprob {
    id: Option<i32>,
    token: String,
    logprob: f64,
}

impl TokenLogprob {
    /// As the inspector shows a token: probabilities are the model's (before sampling), the
    /// entropy is over the listed alternatives only. A server that sends no ids gets stand-ins
    /// unique at the position (-1, -2, … by rank), which is all a branch needs.
    fn into_probs(self) -> TokenProbs {
        let p = |logprob: f64| logprob.exp() as f32;
        let top: Vec<TokenAlternative> = self
            .top_logprobs
            .into_iter()
            .enumerate()
            .map(|(rank, t)| TokenAlternative { id: t.id.unwrap_or(-(rank as i32) - 1), text: t.token, p: p(t.logprob) })
            .collect();
        let entropy = -top.iter().map(|t| f64::from(t.p)).filter(|&q| q > 0.0).map(|q| q * q.log2()).sum::<f64>();
        let id = self.id.or_else(|| top.iter().find(|t| t.text == self.token).map(|t| t.id)).unwrap_or(i32::MIN);
        TokenProbs { id, text: self.token, p: p(self.logprob), entropy: entropy.max(0.0) as f32, top }
    }
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    /// The model's reasoning, streamed apart: `reasoning_content` from llama.cpp's server,
    /// DeepSeek and vLLM; `reasoning` from OpenRouter, Ollama and newer vLLM.
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<DeltaCall>,
}

/// A piece of a call as it streams: the first of a call names it, the rest add to its arguments.
#[derive(Deserialize)]
struct DeltaCall {
    #[serde(default)]
    index: u32,
    function: Option<DeltaFunction>,
}

#[derive(Deserialize)]
struct DeltaFunction {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u32,
    #[serde(default)]
    completion_tokens: u32,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    reasoning_tokens: Option<u32>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: u32,
}

#[derive(Deserialize)]
struct Timings {
    cache_n: Option<u32>,
    predicted_per_second: Option<f64>,
}

/// Reads `data:` chunks up to `[DONE]`. Calls streamed as `tool_calls` pieces are written into
/// the reply's text as Hearth keeps every model's calls (`hearth_core::call_block`'s layout), as
/// they come, so a remote reply's calls are stored, shown and run as a local one's; reasoning
/// streamed apart is written as the reply's leading `<think>` block, as a local model writes it.
#[derive(Default)]
pub struct ChunkParser {
    /// The call being written: its index, and whether any of its arguments came.
    open: Option<(u32, bool)>,
    reasoning: ReasoningWriter,
}

impl ChunkParser {
    fn call_piece(&mut self, call: DeltaCall, text: &mut String) {
        self.reasoning.close(text);
        let function = call.function.unwrap_or(DeltaFunction { name: None, arguments: None });
        if self.open.map(|(index, _)| index) != Some(call.index) {
            self.close_call(text);
            let name = function.name.clone().unwrap_or_default();
            text.push_str(&format!("{CALL_OPEN}\n{{\"name\":{},\"arguments\":", Value::String(name)));
            self.open = Some((call.index, false));
        }
        if let Some(arguments) = function.arguments.filter(|a| !a.is_empty()) {
            text.push_str(&arguments);
            if let Some((_, wrote)) = &mut self.open {
                *wrote = true;
            }
        }
    }

    /// Whatever is open (the reasoning block, a call) is closed: the reply ends.
    fn close_all(&mut self, text: &mut String) {
        self.reasoning.close(text);
        self.close_call(text);
    }

    fn close_call(&mut self, text: &mut String) {
        if let Some((_, wrote)) = self.open.take() {
            if !wrote {
                text.push_str("{}");
            }
            text.push_str(&format!("}}\n{CALL_CLOSE}"));
        }
    }
}

impl Parser for ChunkParser {
    fn on_event(&mut self, event: &Event, tally: &mut Tally) -> Result<Option<String>, crate::stream::EventError> {
        use crate::stream::EventError;
        let data = event.data.trim();
        if data == "[DONE]" {
            tally.done = true;
            let mut text = String::new();
            self.close_all(&mut text);
            return Ok((!text.is_empty()).then_some(text));
        }
        if data.is_empty() {
            return Ok(None);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| EventError::Malformed(format!("{e} in {data}")))?;
        if chunk.error.is_some() {
            return Err(EventError::Remote(data.to_owned()));
        }
        if let Some(usage) = chunk.usage {
            tally.prompt_tokens = Some(usage.prompt_tokens);
            tally.completion_tokens = Some(usage.completion_tokens);
            if let Some(details) = usage.prompt_tokens_details {
                tally.cached_tokens = Some(details.cached_tokens);
            }
            tally.reasoning_tokens = usage.completion_tokens_details.and_then(|d| d.reasoning_tokens).or(tally.reasoning_tokens);
        }
        if let Some(timings) = chunk.timings {
            tally.cached_tokens = timings.cache_n.or(tally.cached_tokens);
            tally.server_decode_tps = timings.predicted_per_second;
        }
        let mut text: Option<String> = None;
        for choice in chunk.choices {
            if let Some(logprobs) = choice.logprobs {
                tally.tokens.extend(logprobs.content.into_iter().map(TokenLogprob::into_probs));
            }
            let reasoning = choice.delta.reasoning_content.or(choice.delta.reasoning).filter(|r| !r.is_empty());
            if let Some(reasoning) = reasoning {
                let text = text.get_or_insert_with(String::new);
                self.close_call(text);
                self.reasoning.reasoning(&reasoning, text);
            }
            if let Some(content) = choice.delta.content.filter(|c| !c.is_empty()) {
                let text = text.get_or_insert_with(String::new);
                self.close_all(text);
                text.push_str(&content);
            }
            for call in choice.delta.tool_calls {
                self.call_piece(call, text.get_or_insert_with(String::new));
            }
            if let Some(reason) = choice.finish_reason {
                let mut closing = String::new();
                self.close_all(&mut closing);
                if !closing.is_empty() {
                    text.get_or_insert_with(String::new).push_str(&closing);
                }
                tally.finish = Some(match reason.as_str() {
                    "length" => FinishReason::Length,
                    _ => FinishReason::EndOfTurn,
                });
            }
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{LogitBias, ProviderKind, Role, read_calls};

    fn config(kind: ProviderKind, extensions: bool) -> ProviderConfig {
        ProviderConfig { extensions, ..ProviderConfig::new("p", "P", kind) }
    }

    #[test]
    fn supported_settings_are_sent_and_only_those() {
        let messages = [ChatMessage::new(Role::System, "be brief"), ChatMessage::new(Role::User, "hi")];
        let s = SamplingParams {
            seed: Some(7),
            stop: vec!["END".into()],
            logit_bias: vec![LogitBias { target: BiasTarget::Token { id: 42 }, bias: -100.0 }],
            ..SamplingParams::default()
        };
        let official = body(&config(ProviderKind::OpenAi, true), "gpt", &messages, &s, false, 4096, None).unwrap();
        assert_eq!(official["messages"][0], json!({ "role": "system", "content": "be brief" }));
        assert_eq!(official["max_completion_tokens"], json!(s.max_tokens));
        assert_eq!(official["logit_bias"], json!({ "42": -100.0 }));
        assert_eq!(official["seed"], json!(7));
        assert!(official.get("top_k").is_none(), "OpenAI gets no llama.cpp fields");

        let plain = body(&config(ProviderKind::OpenAiCompatible, false), "m", &messages, &s, false, 4096, None).unwrap();
        assert!(plain.get("top_k").is_none() && plain.get("stream_options").is_none());
        assert_eq!(plain["max_tokens"], json!(s.max_tokens));

        let llama = body(&config(ProviderKind::OpenAiCompatible, true), "m", &messages, &s, false, 4096, None).unwrap();
        assert_eq!(llama["top_k"], json!(s.top_k));
        assert_eq!(llama["logit_bias"], json!([[42, -100.0]]));
        assert_eq!(llama["samplers"][0], json!("penalties"));
        assert_eq!(llama["dry_penalty_last_n"], json!(4096), "-1 (the whole context) is sent as the context length");
        assert_eq!(llama["reasoning_budget_tokens"], json!(-1));
        assert!(llama.get("chat_template_kwargs").is_none(), "thinking is not switched off unless asked");
        let off = SamplingParams { reasoning_budget: 0, ..s.clone() };
        let llama_off = body(&config(ProviderKind::OpenAiCompatible, true), "m", &messages, &off, false, 4096, None).unwrap();
        assert_eq!(llama_off["chat_template_kwargs"], json!({ "enable_thinking": false }));
        assert!(
            body(&config(ProviderKind::OpenAi, true), "m", &messages, &off, false, 4096, None)
                .unwrap()
                .get("chat_template_kwargs")
                .is_none()
        );
        // OpenAI's own reasoning control: an effort for a budget, nothing for no limit, and only to OpenAI.
        let effort = |budget: i32, kind: ProviderKind| {
            let s = SamplingParams { reasoning_budget: budget, ..s.clone() };
            body(&config(kind, false), "o", &messages, &s, false, 4096, None).unwrap().get("reasoning_effort").cloned()
        };
        assert_eq!(effort(0, ProviderKind::OpenAi), Some(json!("minimal")));
        assert_eq!(effort(20_000, ProviderKind::OpenAi), Some(json!("high")));
        assert_eq!(effort(-1, ProviderKind::OpenAi), None);
        assert_eq!(effort(0, ProviderKind::OpenAiCompatible), None);
        // The inspector's probabilities are asked of llama.cpp's server only.
        assert_eq!((&llama["logprobs"], &llama["top_logprobs"]), (&json!(true), &json!(5)));
        assert!(official.get("logprobs").is_none() && plain.get("logprobs").is_none());
        let none = SamplingParams { top_probs: 0, ..s.clone() };
        assert!(
            body(&config(ProviderKind::OpenAiCompatible, true), "m", &messages, &none, false, 4096, None)
                .unwrap()
                .get("logprobs")
                .is_none()
        );
    }

    #[test]
    fn what_cannot_be_sent_is_refused_in_words() {
        let messages = [ChatMessage::new(Role::User, "hi")];
        let text_bias = SamplingParams {
            logit_bias: vec![LogitBias { target: BiasTarget::Text { text: "no".into() }, bias: -5.0 }],
            ..SamplingParams::default()
        };
        let grammar = SamplingParams { constraint: Some(Constraint::Gbnf("root ::= \"a\"".into())), ..SamplingParams::default() };
        let stops = SamplingParams { stop: (0..5).map(|i| i.to_string()).collect(), ..SamplingParams::default() };
        let openai = config(ProviderKind::OpenAi, false);
        for (s, words) in [(&text_bias, "by token id only"), (&grammar, "GBNF"), (&stops, "at most 4 stop strings")] {
            assert!(body(&openai, "m", &messages, s, false, 4096, None).unwrap_err().0.contains(words), "{words}");
        }
        assert!(body(&config(ProviderKind::OpenAiCompatible, true), "m", &messages, &grammar, false, 4096, None).is_ok());
    }

    #[test]
    fn calls_and_results_go_as_tool_calls_and_tool_messages() {
        let call = hearth_core::call_block("find_item", r#"{"item":"kettle"}"#);
        let messages = [
            ChatMessage::new(Role::User, "Where is the kettle?"),
            ChatMessage::new(Role::Assistant, format!("Let me look.\n{call}\n{}", hearth_core::call_block("clock", "{}"))),
            ChatMessage::new(Role::Tool, "Left cupboard."),
            ChatMessage::new(Role::Tool, "Noon."),
            ChatMessage::new(Role::Assistant, "It is in the left cupboard."),
        ];
        let tools = OfferedTools {
            tools: vec![hearth_core::ToolSpec {
                name: "find_item".into(),
                description: "Finds".into(),
                parameters: json!({"type": "object"}),
            }],
            choice: ToolChoice::Named("find_item".into()),
            parallel: false,
        };
        let b = body(&config(ProviderKind::OpenAi, false), "m", &messages, &SamplingParams::default(), false, 4096, Some(&tools)).unwrap();
        assert_eq!(
            b["messages"][1],
            json!({"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "call_1_0", "type": "function", "function": {"name": "find_item", "arguments": "{\"item\":\"kettle\"}"}},
                {"id": "call_1_1", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]})
        );
        assert_eq!(b["messages"][2], json!({"role": "tool", "tool_call_id": "call_1_0", "content": "Left cupboard."}));
        assert_eq!(b["messages"][3], json!({"role": "tool", "tool_call_id": "call_1_1", "content": "Noon."}));
        assert_eq!(b["messages"][4], json!({"role": "assistant", "content": "It is in the left cupboard."}));
        assert_eq!(b["tools"][0]["function"]["name"], "find_item");
        assert_eq!(b["tool_choice"], json!({"type": "function", "function": {"name": "find_item"}}));
        assert_eq!(b["parallel_tool_calls"], false);
        let none = OfferedTools { choice: ToolChoice::None, ..tools };
        let b = body(&config(ProviderKind::OpenAi, false), "m", &messages, &SamplingParams::default(), false, 4096, Some(&none)).unwrap();
        assert!(b.get("tools").is_none());
    }

    #[test]
    fn streamed_calls_are_written_as_hearth_keeps_them() {
        let chunks = [
            r#"{"choices":[{"delta":{"content":"Let me look."}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"find_item","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"item\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"kettle\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"clock"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ];
        let mut parser = ChunkParser::default();
        let mut tally = Tally::default();
        let mut text = String::new();
        for data in chunks {
            let event = Event { data: data.into(), ..Event::default() };
            let piece = match parser.on_event(&event, &mut tally) {
                Ok(piece) => piece,
                Err(crate::stream::EventError::Malformed(e) | crate::stream::EventError::Remote(e)) => panic!("{data}: {e}"),
            };
            if let Some(piece) = piece {
                text.push_str(&piece);
            }
        }
        let expected = format!(
            "Let me look.{}{}",
            hearth_core::call_block("find_item", r#"{"item":"kettle"}"#),
            hearth_core::call_block("clock", "{}")
        );
        assert_eq!(text, expected);
        assert_eq!(tally.finish, Some(FinishReason::EndOfTurn));
        let read = read_calls(&text);
        assert_eq!(read.calls.len(), 2);
        assert_eq!(read.content, "Let me look.");
    }

    /// A user message's images go as content parts before its text, each a data URL with its
    /// media type read from the bytes.
    #[test]
    fn images_go_as_data_url_parts_before_the_text() {
        let mut messages = vec![ChatMessage::new(Role::User, "What is this?")];
        messages[0].images = vec![hearth_core::ImageInput::new(b"\x89PNG\r\n\x1a\nrest".to_vec())];
        let b = body(&config(ProviderKind::OpenAi, true), "gpt", &messages, &SamplingParams::default(), false, 4096, None).unwrap();
        assert_eq!(
            b["messages"][0]["content"],
            json!([
                { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw0KGgpyZXN0" } },
                { "type": "text", "text": "What is this?" }
            ])
        );
    }
}
