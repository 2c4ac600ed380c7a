//! Anthropic's Messages API: the system prompt is a field of its own, turns must alternate
//! starting with the user, `max_tokens` is required, and the stream is a sequence of typed events
//! (message_start, content_block_delta, message_delta, message_stop, ping, error).

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use hearth_core::{ChatMessage, FinishReason, Role, SamplingParams};

use crate::Unsendable;
use crate::stream::{EventError, Parser, Tally};

/// The version of the API this speaks (sent as `anthropic-version`).
pub const API_VERSION: &str = "2023-06-01";

pub fn body(model: &str, messages: &[ChatMessage], s: &SamplingParams, continue_last: bool) -> Result<Value, Unsendable> {
    let system: Vec<&str> = messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
    let mut turns: Vec<(Role, String)> = Vec::new();
    // Tools are not offered here yet: results of earlier calls (from another model) are read as
    // the user's text, as a local model reads them.
    let mut messages = messages.to_vec();
    hearth_core::read_tools_locally(&mut messages);
    for m in messages.iter().filter(|m| m.role != Role::System) {
        // Two turns of one role in a row (an edited branch, a failed reply left out) become one.
        match turns.last_mut() {
            Some((role, text)) if *role == m.role => {
                text.push_str("\n\n");
                text.push_str(&m.content);
            }
            _ => turns.push((m.role, m.content.clone())),
        }
    }
    if turns.first().is_some_and(|(role, _)| *role == Role::Assistant) {
        turns.remove(0);
    }
    if turns.is_empty() {
        return Err(Unsendable("there is no user message to answer".into()));
    }
    if let Some((Role::Assistant, text)) = turns.last_mut() {
        if continue_last {
            // A trailing assistant turn is a prefill Anthropic writes on from; it may not end in
            // whitespace.
            let trimmed = text.trim_end().len();
            text.truncate(trimmed);
        } else {
            turns.pop();
        }
    }
    let mut b = Map::new();
    b.insert("model".into(), json!(model));
    b.insert("max_tokens".into(), json!(s.max_tokens));
    b.insert("stream".into(), json!(true));
    if !system.is_empty() {
        b.insert("system".into(), json!(system.join("\n\n")));
    }
    b.insert("messages".into(), Value::Array(turns.iter().map(|(role, text)| json!({ "role": role.as_str(), "content": text })).collect()));
    b.insert("temperature".into(), json!(s.temperature));
    b.insert("top_p".into(), json!(s.top_p));
    if s.top_k > 0 {
        b.insert("top_k".into(), json!(s.top_k));
    }
    if !s.stop.is_empty() {
        b.insert("stop_sequences".into(), json!(s.stop));
    }
    Ok(Value::Object(b))
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {},
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
    /// Extended thinking and tool input are not shown as reply text.
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

#[derive(Default)]
pub struct EventParser;

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
            StreamEvent::ContentBlockDelta { delta: BlockDelta::TextDelta { text } } => {
                return Ok((!text.is_empty()).then_some(text));
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
            StreamEvent::MessageStop {} => tally.done = true,
            StreamEvent::Error {} => return Err(EventError::Remote(data.to_owned())),
            StreamEvent::ContentBlockDelta { delta: BlockDelta::Other }
            | StreamEvent::ContentBlockStart {}
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
        let fresh = body("claude", &messages[..3], &s, false).unwrap();
        assert_eq!(fresh["system"], json!("be brief"));
        assert_eq!(turns(&fresh), [("user".to_owned(), "one\n\ntwo".to_owned())]);
        assert_eq!(fresh["max_tokens"], json!(s.max_tokens));
        assert_eq!(fresh["top_k"], json!(s.top_k));

        let continued = body("claude", &messages, &s, true).unwrap();
        assert_eq!(turns(&continued)[1], ("assistant".to_owned(), "partial".to_owned()));
        assert!(body("claude", &messages[..1], &s, false).is_err());
    }
}
