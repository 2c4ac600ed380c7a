//! Anthropic's Messages API: the system prompt is a field of its own, turns must alternate
//! starting with the user, `max_tokens` is required, and the stream is a sequence of typed events
//! (message_start, content_block_delta, message_delta, message_stop, ping, error).

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use std::collections::VecDeque;

use hearth_core::{
    CALL_CLOSE, CALL_OPEN, CallTurn, ChatMessage, FinishReason, OfferedTools, ReasoningWriter, Role, SamplingParams, THINK_CLOSE,
    THINK_OPEN, ToolChoice, call_turns,
};

use crate::Unsendable;
use crate::stream::{EventError, Parser, Tally};

/// The version of the API this speaks (sent as `anthropic-version`).
pub const API_VERSION: &str = "2023-06-01";

/// The beta that lets Claude think between tool calls, after each result, not only before its
/// first call (sent as `anthropic-beta`).
pub const INTERLEAVED_THINKING: &str = "interleaved-thinking-2025-05-14";

/// The betas a request's `body` needs: interleaved thinking where it thinks with tools.
pub fn betas(body: &Value) -> Option<&'static str> {
    (body.get("thinking").is_some() && body.get("tools").is_some()).then_some(INTERLEAVED_THINKING)
}

pub fn body(
    model: &str,
    messages: &[ChatMessage],
    s: &SamplingParams,
    continue_last: bool,
    tools: Option<&OfferedTools>,
) -> Result<Value, Unsendable> {
    let tools = tools.filter(|t| !t.tools.is_empty() && t.choice != ToolChoice::None);
    let thinking = thinking_budget(s, tools, continue_last);
    let system: Vec<&str> = messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
    let mut messages = messages.to_vec();
    // Earlier replies' reasoning goes back only as a signed thinking block, with thinking on (the
    // API wants the last one back in a tool loop), else not at all; a reply being continued goes
    // as it is.
    let past = messages.len() - usize::from(continue_last && !messages.is_empty());
    let mut signed: VecDeque<Option<Block>> =
        messages[..past].iter().filter(|m| m.role == Role::Assistant).map(|m| thinking.and_then(|_| signed_thinking(m))).collect();
    hearth_core::drop_past_reasoning(&mut messages[..past]);
    if tools.is_none() {
        // The API refuses tool blocks without tools defined: earlier calls and results (from
        // another model, say) are read as text then, as a local model reads them.
        hearth_core::read_tools_locally(&mut messages);
    }
    let mut turns: Vec<(Role, Vec<Block>)> = Vec::new();
    // Without tools, a reply's calls go as its text (the API refuses tool blocks then).
    let read: Vec<CallTurn> = if tools.is_some() { call_turns(&messages, "toolu") } else { messages.iter().map(CallTurn::Said).collect() };
    for turn in read {
        let (role, mut blocks) = match turn {
            CallTurn::Said(m) if m.role == Role::System => continue,
            CallTurn::Said(m) => {
                let images = m.images.iter().map(|image| Block::Image { media_type: image.media_type(), data: base64_of(&image.bytes) });
                (m.role, images.chain([Block::Text(m.content.clone())]).collect())
            }
            CallTurn::Calls { text, calls } => {
                let mut blocks = vec![Block::Text(text)];
                for (id, call) in calls {
                    let input = serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
                    blocks.push(Block::ToolUse { id, name: call.name, input });
                }
                (Role::Assistant, blocks)
            }
            CallTurn::Answer { call_id, content } => (Role::User, vec![Block::ToolResult { id: call_id, content: content.to_owned() }]),
        };
        if role == Role::Assistant
            && let Some(thought) = signed.pop_front().flatten()
        {
            blocks.insert(0, thought);
        }
        // Two turns of one role in a row (an edited branch, a failed reply left out, results
        // after results) become one.
        match turns.last_mut() {
            Some((last, existing)) if *last == role => {
                for block in blocks {
                    match (existing.last_mut(), block) {
                        (Some(Block::Text(text)), Block::Text(more)) => {
                            text.push_str("\n\n");
                            text.push_str(&more);
                        }
                        (_, block) => existing.push(block),
                    }
                }
            }
            _ => turns.push((role, blocks)),
        }
    }
    if turns.first().is_some_and(|(role, _)| *role == Role::Assistant) {
        turns.remove(0);
    }
    if turns.is_empty() {
        return Err(Unsendable("there is no user message to answer".into()));
    }
    if let Some((Role::Assistant, blocks)) = turns.last_mut() {
        match (continue_last, blocks.as_mut_slice()) {
            // A trailing assistant turn is a prefill Anthropic writes on from; it may not end in
            // whitespace.
            (true, [Block::Text(text)]) => {
                let trimmed = text.trim_end().len();
                text.truncate(trimmed);
            }
            _ => drop(turns.pop()),
        }
    }
    let mut b = Map::new();
    b.insert("model".into(), json!(model));
    // With thinking on, max_tokens holds the reasoning too: the answer keeps its own.
    b.insert("max_tokens".into(), json!(s.max_tokens + thinking.unwrap_or(0)));
    b.insert("stream".into(), json!(true));
    if let Some(budget) = thinking {
        b.insert("thinking".into(), json!({ "type": "enabled", "budget_tokens": budget }));
    }
    if !system.is_empty() {
        b.insert("system".into(), json!(system.join("\n\n")));
    }
    let wire = turns.iter().map(|(role, blocks)| json!({ "role": role.as_str(), "content": content(blocks) })).collect();
    b.insert("messages".into(), Value::Array(wire));
    if let Some(offered) = tools {
        let defined: Vec<Value> =
            offered.tools.iter().map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.parameters })).collect();
        b.insert("tools".into(), Value::Array(defined));
        let mut choice = match &offered.choice {
            ToolChoice::Named(name) => json!({ "type": "tool", "name": name }),
            ToolChoice::Required => json!({ "type": "any" }),
            _ => json!({ "type": "auto" }),
        };
        if !offered.parallel {
            choice["disable_parallel_tool_use"] = json!(true);
        }
        b.insert("tool_choice".into(), choice);
    }
    // Thinking refuses a temperature or top-k of the user's, and a top-p under 0.95.
    if thinking.is_none() {
        b.insert("temperature".into(), json!(s.temperature));
        if s.top_k > 0 {
            b.insert("top_k".into(), json!(s.top_k));
        }
    }
    // (As the user wrote it: 0.95 as an f32 widens to 0.94999…, under the API's bound.)
    let top_p = (f64::from(s.top_p) * 1e4).round() / 1e4;
    if thinking.is_none() || top_p >= THINKING_MIN_TOP_P {
        b.insert("top_p".into(), json!(top_p));
    }
    if !s.stop.is_empty() {
        b.insert("stop_sequences".into(), json!(s.stop));
    }
    Ok(Value::Object(b))
}

/// The least top-p Anthropic takes with thinking on.
const THINKING_MIN_TOP_P: f64 = 0.95;

/// Extended thinking's budget for this request: only with a budget set, and not where the API
/// refuses thinking (a forced tool, or a reply continued from its text, which thinking cannot
/// prefill).
fn thinking_budget(s: &SamplingParams, tools: Option<&OfferedTools>, continue_last: bool) -> Option<u32> {
    let forced = tools.is_some_and(|t| matches!(t.choice, ToolChoice::Required | ToolChoice::Named(_)));
    if forced || continue_last { None } else { hearth_core::anthropic_thinking_budget(s.reasoning_budget) }
}

/// A reply's reasoning as the thinking block Anthropic signed: its text exactly as it came.
fn signed_thinking(message: &ChatMessage) -> Option<Block> {
    let signature = message.reasoning_signature.clone()?;
    let body = message.content.trim_start().strip_prefix(THINK_OPEN)?;
    let thinking = &body[..body.find(THINK_CLOSE)?];
    Some(Block::Thinking { thinking: thinking.to_owned(), signature })
}

/// A part of a turn.
enum Block {
    /// Reasoning the API signed, sent back before the rest of its reply.
    Thinking {
        thinking: String,
        signature: String,
    },
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        id: String,
        content: String,
    },
    Image {
        media_type: &'static str,
        data: String,
    },
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A turn's content: its text alone as a string (as turns without tools always were), else blocks.
fn content(blocks: &[Block]) -> Value {
    if let [Block::Text(text)] = blocks {
        return json!(text);
    }
    let blocks = blocks.iter().filter_map(|block| match block {
        Block::Thinking { thinking, signature } => Some(json!({ "type": "thinking", "thinking": thinking, "signature": signature })),
        Block::Text(text) if text.is_empty() => None,
        Block::Text(text) => Some(json!({ "type": "text", "text": text })),
        Block::ToolUse { id, name, input } => Some(json!({ "type": "tool_use", "id": id, "name": name, "input": input })),
        Block::ToolResult { id, content } => Some(json!({ "type": "tool_result", "tool_use_id": id, "content": content })),
        Block::Image { media_type, data } => {
            Some(json!({ "type": "image", "source": { "type": "base64", "media_type": media_type, "data": data } }))
        }
    });
    Value::Array(blocks.collect())
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        content_block: StartBlock,
    },
    ContentBlockDelta {
        delta: BlockDelta,
    },
    ContentBlockStop {},
    MessageDelta {
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<OutputUsage>,
    },
    MessageStop {},
    Ping {},
    Error {},
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartBlock {
    ToolUse {
        name: String,
    },
    /// Extended thinking: its text comes in `thinking_delta`s.
    Thinking {},
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartMessage {
    usage: Option<InputUsage>,
}

#[derive(Deserialize)]
struct InputUsage {
    #[serde(default)]
    input_tokens: u32,
    #[serde(default)]
    cache_read_input_tokens: Option<u32>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    /// A piece of a call's arguments (JSON text).
    InputJsonDelta {
        partial_json: String,
    },
    /// A piece of extended thinking.
    ThinkingDelta {
        thinking: String,
    },
    /// The thinking block's signature: kept with the reply, which sends it back with the block.
    SignatureDelta {
        signature: String,
    },
    /// Deltas added to the API later: not text.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct OutputUsage {
    #[serde(default)]
    output_tokens: u32,
}

/// Reads the typed events. A `tool_use` block is written into the reply's text in Hearth's call
/// layout as it streams, so a call from Anthropic is stored, shown and run as a local one; a
/// thinking block as the reply's leading `<think>` block, as a local model writes it.
#[derive(Default)]
pub struct EventParser {
    /// A call being written, and whether any of its arguments came.
    open: Option<bool>,
    reasoning: ReasoningWriter,
}

impl Parser for EventParser {
    fn on_event(&mut self, event: &Event, tally: &mut Tally) -> Result<Option<String>, EventError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(None);
        }
        let parsed: StreamEvent = match serde_json::from_str(data) {
            Ok(parsed) => parsed,
            // Event types added to the API later are skipped, as Anthropic asks clients to.
            Err(_) if is_unknown_type(data) => return Ok(None),
            Err(e) => return Err(EventError::Malformed(format!("{e} in {data}"))),
        };
        match parsed {
            StreamEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    tally.prompt_tokens = Some(usage.input_tokens + usage.cache_read_input_tokens.unwrap_or(0));
                    tally.cached_tokens = usage.cache_read_input_tokens;
                }
            }
            StreamEvent::ContentBlockDelta { delta: BlockDelta::TextDelta { text: delta } } => {
                let mut text = String::new();
                if !delta.is_empty() {
                    self.reasoning.close(&mut text);
                    text.push_str(&delta);
                }
                return Ok((!text.is_empty()).then_some(text));
            }
            StreamEvent::ContentBlockDelta { delta: BlockDelta::ThinkingDelta { thinking } } => {
                let mut text = String::new();
                self.reasoning.reasoning(&thinking, &mut text);
                return Ok((!text.is_empty()).then_some(text));
            }
            StreamEvent::ContentBlockDelta { delta: BlockDelta::SignatureDelta { signature } } => {
                tally.reasoning_signature.get_or_insert_default().push_str(&signature);
            }
            StreamEvent::ContentBlockStart { content_block: StartBlock::ToolUse { name } } => {
                self.open = Some(false);
                let mut text = String::new();
                self.reasoning.close(&mut text);
                text.push_str(&format!("{CALL_OPEN}\n{{\"name\":{},\"arguments\":", Value::String(name)));
                return Ok(Some(text));
            }
            StreamEvent::ContentBlockDelta { delta: BlockDelta::InputJsonDelta { partial_json } } if self.open.is_some() => {
                if !partial_json.is_empty() {
                    self.open = Some(true);
                }
                return Ok((!partial_json.is_empty()).then_some(partial_json));
            }
            StreamEvent::ContentBlockStop {} if self.open.is_some() => {
                let wrote = self.open.take() == Some(true);
                return Ok(Some(format!("{}}}\n{CALL_CLOSE}", if wrote { "" } else { "{}" })));
            }
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    tally.finish = Some(match reason.as_str() {
                        "max_tokens" => FinishReason::Length,
                        "stop_sequence" => FinishReason::StopString,
                        _ => FinishReason::EndOfTurn,
                    });
                }
                if let Some(usage) = usage {
                    tally.completion_tokens = Some(usage.output_tokens);
                }
            }
            StreamEvent::MessageStop {} => {
                tally.done = true;
                let mut text = String::new();
                self.reasoning.close(&mut text);
                return Ok((!text.is_empty()).then_some(text));
            }
            StreamEvent::Error {} => return Err(EventError::Remote(data.to_owned())),
            StreamEvent::ContentBlockDelta { .. }
            | StreamEvent::ContentBlockStart { .. }
            | StreamEvent::ContentBlockStop {}
            | StreamEvent::Ping {} => {}
        }
        Ok(None)
    }
}

fn is_unknown_type(data: &str) -> bool {
    const KNOWN: &[&str] = &[
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    ];
    serde_json::from_str::<Value>(data)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(|t| !KNOWN.contains(&t)))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::read_calls;

    fn turns(body: &Value) -> Vec<(String, String)> {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned()))
            .collect()
    }

    #[test]
    fn the_system_prompt_moves_out_and_turns_alternate() {
        let messages = [
            ChatMessage::new(Role::System, "be brief"),
            ChatMessage::new(Role::User, "one"),
            ChatMessage::new(Role::User, "two"),
            ChatMessage::new(Role::Assistant, "partial "),
        ];
        let s = SamplingParams::default();
        let fresh = body("claude", &messages[..3], &s, false, None).unwrap();
        assert_eq!(fresh["system"], json!("be brief"));
        assert_eq!(turns(&fresh), [("user".to_owned(), "one\n\ntwo".to_owned())]);
        assert_eq!(fresh["max_tokens"], json!(s.max_tokens));
        assert_eq!(fresh["top_k"], json!(s.top_k));

        let continued = body("claude", &messages, &s, true, None).unwrap();
        assert_eq!(turns(&continued)[1], ("assistant".to_owned(), "partial".to_owned()));
        assert!(body("claude", &messages[..1], &s, false, None).is_err());
    }

    #[test]
    fn calls_and_results_go_as_tool_use_and_tool_result_blocks() {
        let messages = [
            ChatMessage::new(Role::User, "Where is the kettle?"),
            ChatMessage::new(Role::Assistant, format!("Let me look.{}", hearth_core::call_block("find_item", r#"{"item":"kettle"}"#))),
            ChatMessage::new(Role::Tool, "Left cupboard."),
        ];
        let tools = OfferedTools {
            tools: vec![hearth_core::ToolSpec {
                name: "find_item".into(),
                description: "Finds".into(),
                parameters: json!({"type": "object"}),
            }],
            choice: ToolChoice::Auto,
            parallel: false,
        };
        let b = body("claude", &messages, &SamplingParams::default(), false, Some(&tools)).unwrap();
        assert_eq!(
            b["messages"][1],
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1_0", "name": "find_item", "input": {"item": "kettle"}}]})
        );
        assert_eq!(
            b["messages"][2],
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1_0", "content": "Left cupboard."}]})
        );
        assert_eq!(b["tools"][0], json!({"name": "find_item", "description": "Finds", "input_schema": {"type": "object"}}));
        assert_eq!(b["tool_choice"], json!({"type": "auto", "disable_parallel_tool_use": true}));
        // Without tools offered, the history's calls and results are read as text.
        let b = body("claude", &messages, &SamplingParams::default(), false, None).unwrap();
        assert_eq!(b["messages"][2], json!({"role": "user", "content": "<tool_response>\nLeft cupboard.\n</tool_response>"}));
        assert!(b.get("tools").is_none());
    }

    fn kettle_tools(choice: ToolChoice) -> OfferedTools {
        let spec = hearth_core::ToolSpec { name: "find_item".into(), description: "Finds".into(), parameters: json!({"type": "object"}) };
        OfferedTools { tools: vec![spec], choice, parallel: false }
    }

    /// A budget turns extended thinking on: max_tokens grows by it, and what the API refuses with
    /// it (a temperature, top-k, top-p under 0.95) is left out; where thinking cannot go (a forced
    /// tool, a continued reply) the request goes without it, as before.
    #[test]
    fn a_reasoning_budget_turns_thinking_on_with_what_it_allows() {
        let ask = [ChatMessage::new(Role::User, "Where is the kettle?")];
        let s = SamplingParams { reasoning_budget: 300, top_p: 0.9, ..SamplingParams::default() };
        let on = body("claude", &ask, &s, false, None).unwrap();
        assert_eq!(on["thinking"], json!({ "type": "enabled", "budget_tokens": 1024 }), "raised to the least the API takes");
        assert_eq!(on["max_tokens"], json!(s.max_tokens + 1024));
        assert!(on.get("temperature").is_none() && on.get("top_k").is_none() && on.get("top_p").is_none(), "{on}");
        let wide = body("claude", &ask, &SamplingParams { top_p: 0.97, ..s.clone() }, false, None).unwrap();
        assert_eq!(wide["top_p"], json!(0.97));
        let default = body("claude", &ask, &SamplingParams { reasoning_budget: 300, ..SamplingParams::default() }, false, None).unwrap();
        assert_eq!(default["top_p"], json!(0.95), "the default top-p, as written, is within the bound");
        for (tools, continued) in [(Some(kettle_tools(ToolChoice::Required)), false), (None, true)] {
            let mut messages = ask.to_vec();
            if continued {
                messages.push(ChatMessage::new(Role::Assistant, "It is in"));
            }
            let off = body("claude", &messages, &s, continued, tools.as_ref()).unwrap();
            assert!(off.get("thinking").is_none() && off.get("temperature").is_some(), "{off}");
        }
        for budget in [-1, 0] {
            let plain = body("claude", &ask, &SamplingParams { reasoning_budget: budget, ..s.clone() }, false, None).unwrap();
            assert!(plain.get("thinking").is_none(), "{budget}");
        }
    }

    /// In a tool loop with thinking on, the reply that called goes back opening with its thinking
    /// block as signed, its text exactly as it came; without a signature or with thinking off, its
    /// reasoning is left out.
    #[test]
    fn signed_reasoning_goes_back_as_its_thinking_block() {
        let reply =
            format!("<think>Let me look\n for it. </think>I will look.{}", hearth_core::call_block("find_item", r#"{"item":"kettle"}"#));
        let signed = ChatMessage { reasoning_signature: Some("sig".into()), ..ChatMessage::new(Role::Assistant, reply.clone()) };
        let loop_with = |assistant: ChatMessage, budget: i32| {
            let messages =
                [ChatMessage::new(Role::User, "Where is the kettle?"), assistant, ChatMessage::new(Role::Tool, "Left cupboard.")];
            let s = SamplingParams { reasoning_budget: budget, ..SamplingParams::default() };
            body("claude", &messages, &s, false, Some(&kettle_tools(ToolChoice::Auto))).unwrap()["messages"][1]["content"].clone()
        };
        let back = loop_with(signed.clone(), 2048);
        assert_eq!(back[0], json!({ "type": "thinking", "thinking": "Let me look\n for it. ", "signature": "sig" }));
        assert_eq!(back[1], json!({ "type": "text", "text": "I will look." }));
        assert_eq!(back[2]["type"], "tool_use");
        for content in [loop_with(signed, -1), loop_with(ChatMessage::new(Role::Assistant, reply), 2048)] {
            assert_eq!(content[0], json!({ "type": "text", "text": "I will look." }), "{content}");
        }
    }

    #[test]
    fn a_streamed_tool_use_block_is_written_as_hearth_keeps_calls() {
        let events = [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_x","name":"find_item","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"item\": "}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"kettle\"}"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}"#,
            r#"{"type":"message_stop"}"#,
        ];
        let mut parser = EventParser::default();
        let mut tally = Tally::default();
        let mut text = String::new();
        for data in events {
            let event = Event { data: data.into(), ..Event::default() };
            match parser.on_event(&event, &mut tally) {
                Ok(Some(piece)) => text.push_str(&piece),
                Ok(None) => {}
                Err(_) => panic!("{data}"),
            }
        }
        let read = read_calls(&text);
        assert_eq!(read.content, "Let me look.");
        assert_eq!((read.calls[0].name.as_str(), read.calls[0].arguments.as_str()), ("find_item", r#"{"item": "kettle"}"#));
        assert_eq!((tally.finish, tally.done), (Some(FinishReason::EndOfTurn), true));
    }

    /// A user message's images go as base64 image blocks before its text.
    #[test]
    fn images_go_as_base64_blocks_before_the_text() {
        let mut messages = vec![ChatMessage::new(Role::User, "What is this?")];
        messages[0].images = vec![hearth_core::ImageInput::new(b"\xFF\xD8\xFFjpeg".to_vec())];
        let b = body("claude", &messages, &SamplingParams::default(), false, None).unwrap();
        assert_eq!(
            b["messages"][0]["content"],
            json!([
                { "type": "image", "source": { "type": "base64", "media_type": "image/jpeg", "data": "/9j/anBlZw==" } },
                { "type": "text", "text": "What is this?" }
            ])
        );
    }
}
