//! A local stand-in for OpenAI's and Anthropic's APIs on 127.0.0.1: the real paths, headers,
//! streaming wire formats and error bodies, with the failure picked by the model name asked for
//! (so one server serves every case):
//!
//! | model          | answer                                                          |
//! |----------------|-----------------------------------------------------------------|
//! | `echo`         | streams "You said: <last user text>" word by word (needs the key) |
//! | `thinker`      | reasons apart from its answer ("Let me count." then "Four."): OpenAI's `reasoning_content` (llama.cpp's server, DeepSeek) with its `reasoning_tokens`, Anthropic's thinking block with its signature |
//! | `tool-caller`  | calls the first tool offered, then says what it said; with Anthropic's thinking on, thinks first (signed) and wants that block back with the result |
//! | `forbidden`    | 403                                                             |
//! | `rate-limited` | 429 with `Retry-After: 7`                                       |
//! | `server-error` | 500 (OpenAI) / 529 overloaded (Anthropic)                       |
//! | `slow`         | headers, then silence                                           |
//! | `cut`          | three words, then the connection drops                          |
//! | `malformed`    | a word, then an event that is not JSON                          |
//! | `error-event`  | a word, then the API's in-stream error event                    |
//! | `endless`      | a word every 20 ms until the client hangs up                    |
//! | `redirect-away`| 307 to `Record::redirect_to` (another host)                     |
//! | `trickle`      | 200 `text/html`, a byte every 50 ms for ever                    |
//! | `huge`         | 200 `application/json`, a gigabyte as fast as it goes           |
//! | `endless-line` | 200 event stream: one line that never ends                      |
//! | `hostile-line`, `hostile-table`, `hostile-code`, `hostile-lists` | Markdown a window finds hard to stream (20,000 tokens of one line, a 500-row table, 5,000 lines of code, lists nested 200 deep), ~4 characters per event, 500 events a second (make bench-app); a short title when asked for ≤ 64 tokens |
//! | `prose`        | an ordinary Markdown answer (~2,300 events, ~20 s) at a local model's pace, 125 events a second (make bench-app); a short title likewise |
//! | `reasoning-prose` | the same text at the same pace, its first 28 paragraphs as reasoning (OpenAI's `reasoning_content`), the rest as the answer (make bench-app); OpenAI's API only |
//! | anything else  | 404, model not found                                            |
//!
//! Any request without the right key gets the API's 401. Used by the tests and, as the
//! `fake_provider` example, by the end-to-end suite.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::stream::{self, StreamExt};
use serde_json::{Value, json};

pub const GOOD_KEY: &str = "sk-test-7f3a9c1e5b";

#[derive(Default)]
pub struct Record {
    /// Bodies of the chat requests, in order.
    pub requests: Mutex<Vec<Value>>,
    pub headers: Mutex<Vec<HeaderMap>>,
    /// Set when a client hung up on an `endless` stream.
    pub hung_up: AtomicBool,
    /// Words an `endless` stream sent before the client hung up.
    pub endless_sent: AtomicUsize,
    /// Where `redirect-away` sends the client.
    pub redirect_to: Mutex<Option<String>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    OpenAi,
    Anthropic,
}

/// Serves both APIs on `listener` (OpenAI under /v1/chat/completions, Anthropic under
/// /v1/messages, models under /v1/models) until the task is dropped.
pub async fn serve(listener: tokio::net::TcpListener, record: Arc<Record>) {
    let app = Router::new()
        .route("/v1/chat/completions", post(openai))
        .route("/v1/messages", post(anthropic))
        .route("/v1/models", get(models))
        .with_state(record);
    axum::serve(listener, app).await.expect("fake provider serves");
}

/// Starts the server on a free port; returns its base URL (…/v1) and what it saw.
pub async fn start() -> (String, Arc<Record>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let record = Arc::new(Record::default());
    tokio::spawn(serve(listener, record.clone()));
    (url, record)
}

fn authorized(api: Api, headers: &HeaderMap) -> bool {
    let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    match api {
        Api::OpenAi => value("authorization") == format!("Bearer {GOOD_KEY}"),
        Api::Anthropic => value("x-api-key") == GOOD_KEY && value("anthropic-version") == "2023-06-01",
    }
}

fn error(api: Api, status: u16, kind: &str, message: &str) -> Response {
    let body = match api {
        Api::OpenAi => json!({ "error": { "message": message, "type": kind, "param": null, "code": kind } }),
        Api::Anthropic => json!({ "type": "error", "error": { "type": kind, "message": message } }),
    };
    (StatusCode::from_u16(status).unwrap(), [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

async fn models(headers: HeaderMap) -> Response {
    let api = if headers.contains_key("x-api-key") { Api::Anthropic } else { Api::OpenAi };
    if !authorized(api, &headers) {
        return error(api, 401, "authentication_error", "invalid x-api-key");
    }
    let data: Vec<Value> = ["echo", "cut", "endless"]
        .iter()
        .map(|id| json!({ "id": id, "object": "model", "type": "model", "display_name": id, "context_length": 4096 }))
        .collect();
    axum::Json(json!({ "object": "list", "data": data, "has_more": false })).into_response()
}

async fn openai(State(record): State<Arc<Record>>, headers: HeaderMap, body: axum::Json<Value>) -> Response {
    chat(Api::OpenAi, record, headers, body.0).await
}

async fn anthropic(State(record): State<Arc<Record>>, headers: HeaderMap, body: axum::Json<Value>) -> Response {
    chat(Api::Anthropic, record, headers, body.0).await
}

async fn chat(api: Api, record: Arc<Record>, headers: HeaderMap, body: Value) -> Response {
    record.requests.lock().unwrap().push(body.clone());
    record.headers.lock().unwrap().push(headers.clone());
    if !authorized(api, &headers) {
        let message = match api {
            Api::OpenAi => {
                let shown = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("").replace("Bearer ", "");
                format!("Incorrect API key provided: {shown}. You can find your API key at https://platform.openai.com/account/api-keys.")
            }
            Api::Anthropic => "invalid x-api-key".into(),
        };
        return error(api, 401, "authentication_error", &message);
    }
    if api == Api::Anthropic
        && let Some(problem) = thinking_refused(&body)
    {
        return error(api, 400, "invalid_request_error", &problem);
    }
    let thinks = api == Api::Anthropic && body["thinking"]["type"] == "enabled";
    let model = body["model"].as_str().unwrap_or("").to_owned();
    let last_user = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_owned();
    let words = |text: &str| text.split_inclusive(' ').map(str::to_owned).collect::<Vec<_>>();
    let events: Vec<String> = match model.as_str() {
        "echo" => {
            let mut e = vec![opening(api)];
            e.extend(words(&format!("You said: {last_user}")).iter().map(|w| delta(api, w)));
            e.extend(end(api, "stop"));
            e
        }
        // Calls the first tool it is offered (with `{"item":"kettle"}`, in two pieces, as each
        // API streams a call); after a tool's result, says what the tool said.
        "tool-caller" => {
            let messages = body["messages"].as_array().cloned().unwrap_or_default();
            let result = messages.last().and_then(|m| match api {
                Api::OpenAi => (m["role"] == "tool").then(|| m["content"].as_str().unwrap_or("").to_owned()),
                Api::Anthropic => m["content"].as_array().and_then(|blocks| {
                    blocks.iter().find(|b| b["type"] == "tool_result").map(|b| b["content"].as_str().unwrap_or("").to_owned())
                }),
            });
            let tool = body["tools"][0].clone();
            let name = tool["function"]["name"].as_str().or(tool["name"].as_str()).unwrap_or("").to_owned();
            match (result, name.is_empty()) {
                (Some(result), _) => {
                    let mut e = vec![opening(api)];
                    e.extend(words(&format!("The tool said: {result}")).iter().map(|w| delta(api, w)));
                    e.extend(end(api, "stop"));
                    e
                }
                (None, false) if thinks => with_thinking(tool_call_events(api, &name)),
                (None, false) => tool_call_events(api, &name),
                (None, true) => return error(api, 400, "invalid_request_error", "tool-caller needs tools"),
            }
        }
        // Calls the first tool it is offered every time, results or not: an agent loop with it
        // runs until its rounds run out.
        "tool-looper" => {
            let tool = body["tools"][0].clone();
            match tool["function"]["name"].as_str().or(tool["name"].as_str()) {
                Some(name) => tool_call_events(api, name),
                None => return error(api, 400, "invalid_request_error", "tool-looper needs tools"),
            }
        }
        "thinker" => thinker_events(api),
        "forbidden" => return error(api, 403, "permission_error", "this key may not use this model"),
        "rate-limited" => {
            let mut response = error(api, 429, "rate_limit_error", "Rate limit reached for requests");
            response.headers_mut().insert("retry-after", "7".parse().unwrap());
            return response;
        }
        "server-error" => {
            return match api {
                Api::OpenAi => error(api, 500, "server_error", "The server had an error while processing your request."),
                Api::Anthropic => error(api, 529, "overloaded_error", "Overloaded"),
            };
        }
        "slow" => return sse(stream::pending::<Result<Bytes, Infallible>>().boxed()),
        "redirect-away" => {
            let to = record.redirect_to.lock().unwrap().clone().unwrap_or_default();
            return (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)]).into_response();
        }
        "trickle" => {
            let body = stream::unfold((), |()| async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Some((Ok::<_, Infallible>(Bytes::from_static(b"<")), ()))
            });
            return ([(header::CONTENT_TYPE, "text/html")], Body::from_stream(body)).into_response();
        }
        "huge" => {
            let body = stream::repeat_with(|| Ok::<_, Infallible>(Bytes::from(vec![b'['; 64 << 10]))).take(16 << 10);
            return ([(header::CONTENT_TYPE, "application/json")], Body::from_stream(body)).into_response();
        }
        "endless-line" => {
            let line = stream::once(async { Ok::<_, Infallible>(Bytes::from_static(b"data: ")) })
                .chain(stream::repeat_with(|| Ok(Bytes::from(vec![b'x'; 64 << 10]))));
            return sse(line.boxed());
        }
        "cut" => {
            let chunks = [opening(api), delta(api, "The "), delta(api, "first "), delta(api, "words ")];
            let body = stream::iter(chunks.into_iter().map(|c| Ok::<_, std::io::Error>(Bytes::from(c)))).chain(stream::once(async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err(std::io::Error::other("connection dropped"))
            }));
            return sse(body.boxed());
        }
        "malformed" => vec![opening(api), delta(api, "Hello "), "data: {\"choices\": [oops\n\n".into()],
        "error-event" => {
            let event = match api {
                Api::OpenAi => "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n".to_owned(),
                Api::Anthropic => {
                    "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
                        .to_owned()
                }
            };
            vec![opening(api), delta(api, "Hello "), event]
        }
        "reasoning-prose" if api == Api::Anthropic => return error(api, 404, "not_found_error", "reasoning-prose speaks OpenAI's API"),
        bench if bench.starts_with("hostile-") || bench == "prose" || bench == "reasoning-prose" => {
            // A chat's title is asked for with a few tokens: answered as a model would, so the
            // bench's next reply does not stream beside a second long one.
            let limit = body["max_completion_tokens"].as_u64().or(body["max_tokens"].as_u64()).unwrap_or(u64::MAX);
            let text = if limit <= 64 { Some("Bench Markdown".to_owned()) } else { bench_markdown(bench) };
            let Some(text) = text else {
                return error(api, 404, "not_found_error", &format!("The model `{model}` does not exist."));
            };
            let pace = Duration::from_millis(if bench.starts_with("hostile-") { 2 } else { PROSE_EVENT_MS });
            let pieces = |text: &str| -> Vec<String> { text.chars().collect::<Vec<_>>().chunks(4).map(|c| c.iter().collect()).collect() };
            let mut events = vec![opening(api)];
            // The reasoning apart, as llama.cpp's server and DeepSeek stream it, up to the answer.
            let (reasoning, answer) = match (bench, limit > 64) {
                ("reasoning-prose", true) => text.split_at(text.match_indices("**Step 29.**").next().map_or(0, |(at, _)| at)),
                _ => ("", text.as_str()),
            };
            let reasoning_delta = |p: &String| chunk(json!({ "content": null, "reasoning_content": p }), None);
            events.extend(pieces(reasoning).iter().map(reasoning_delta));
            events.extend(pieces(answer).iter().map(|p| delta(api, p)));
            events.extend(end(api, "stop"));
            let body = stream::iter(events).then(move |event| async move {
                tokio::time::sleep(pace).await;
                Ok::<_, Infallible>(Bytes::from(event))
            });
            return sse(body.boxed());
        }
        "endless" => {
            let guard = HangUp(record.clone());
            let body = stream::unfold((0usize, guard), move |(n, guard)| async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                guard.0.endless_sent.store(n + 1, Ordering::SeqCst);
                let chunk = if n == 0 { opening(api) + &delta(api, "word ") } else { delta(api, "word ") };
                Some((Ok::<_, Infallible>(Bytes::from(chunk)), (n + 1, guard)))
            });
            return sse(body.boxed());
        }
        _ => {
            let message = format!("The model `{model}` does not exist or you do not have access to it.");
            return error(api, 404, "not_found_error", &message);
        }
    };
    sse(stream::iter(events.into_iter().map(|e| Ok::<_, Infallible>(Bytes::from(e)))).boxed())
}

/// `prose` writes an event (~4 characters, about a token) this often: 125 a second, a local
/// model's speed on this machine's two cores.
const PROSE_EVENT_MS: u64 = 8;

/// What the `hostile-*` and `prose` models write.
fn bench_markdown(model: &str) -> Option<String> {
    Some(match model {
        // A model's ordinary answer, ~2,300 events (~20 s): paragraphs, a list, inline code.
        "prose" | "reasoning-prose" => (1..=36)
            .map(|i| {
                format!(
                    "**Step {i}.** The reply keeps growing at the pace a local model writes, so the window \
                     lays out and paints the newest paragraph while the rest stays put. Each `update` adds \
                     a few words.\n\n- first point of step {i}\n- second point, a little longer than the first\n\n"
                )
            })
            .collect(),
        "hostile-line" => "lorem".repeat(20_000),
        "hostile-table" => {
            let rows: String = (0..500).map(|i| format!("| {i} | cell {i} | *more* {i} |\n")).collect();
            format!("| n | text | more |\n|---|---|---|\n{rows}")
        }
        "hostile-code" => {
            let lines: String = (0..5_000).map(|i| format!("let x{i} = {i};\n")).collect();
            format!("```rust\n{lines}```\n")
        }
        "hostile-lists" => (0..200).map(|depth| format!("{}- level {depth}\n", "  ".repeat(depth))).collect(),
        _ => return None,
    })
}

/// Marks the record when the stream holding it is dropped: the client hung up.
struct HangUp(Arc<Record>);

impl Drop for HangUp {
    fn drop(&mut self) {
        self.0.hung_up.store(true, Ordering::SeqCst);
    }
}

fn sse<E: Into<Box<dyn std::error::Error + Send + Sync>> + 'static>(
    body: futures_util::stream::BoxStream<'static, Result<Bytes, E>>,
) -> Response {
    ([(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")], Body::from_stream(body)).into_response()
}

fn opening(api: Api) -> String {
    match api {
        Api::OpenAi => chunk(json!({ "role": "assistant", "content": "" }), None),
        Api::Anthropic => {
            let start = json!({ "type": "message_start", "message": { "id": "msg_1", "type": "message", "role": "assistant",
                "content": [], "model": "claude-fake", "stop_reason": null, "usage": { "input_tokens": 21, "output_tokens": 1 } } });
            let block = json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } });
            format!(
                "event: message_start\ndata: {start}\n\nevent: content_block_start\ndata: {block}\n\nevent: ping\ndata: {{\"type\": \"ping\"}}\n\n"
            )
        }
    }
}

fn delta(api: Api, text: &str) -> String {
    match api {
        Api::OpenAi => chunk(json!({ "content": text }), None),
        Api::Anthropic => {
            let data = json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": text } });
            format!("event: content_block_delta\ndata: {data}\n\n")
        }
    }
}

fn end(api: Api, reason: &str) -> Vec<String> {
    match api {
        Api::OpenAi => vec![
            chunk(json!({}), Some(reason)),
            format!(
                "data: {}\n\n",
                json!({ "id": "c1", "object": "chat.completion.chunk", "choices": [],
                "usage": { "prompt_tokens": 21, "completion_tokens": 5, "total_tokens": 26 } })
            ),
            "data: [DONE]\n\n".into(),
        ],
        Api::Anthropic => vec![
            format!("event: content_block_stop\ndata: {}\n\n", json!({ "type": "content_block_stop", "index": 0 })),
            format!(
                "event: message_delta\ndata: {}\n\n",
                json!({ "type": "message_delta",
                "delta": { "stop_reason": "end_turn", "stop_sequence": null }, "usage": { "output_tokens": 5 } })
            ),
            format!("event: message_stop\ndata: {}\n\n", json!({ "type": "message_stop" })),
        ],
    }
}

/// The signature the fake's Anthropic puts on its thinking blocks.
pub const THINKING_SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3h";
/// What the tool-caller thinks before its call, with thinking on (Anthropic).
pub const TOOL_THINKING: &str = "The kettle: I should look it up.\n";

/// Why Anthropic's API refuses the request's extended thinking, as it would: a budget under
/// 1,024 or not under max_tokens, a temperature, top-k or forced tool beside it, and, in a tool
/// loop, a calling reply that does not open with the thinking block exactly as it was signed.
fn thinking_refused(body: &Value) -> Option<String> {
    if body["thinking"]["type"] != "enabled" {
        return None;
    }
    let budget = body["thinking"]["budget_tokens"].as_u64().unwrap_or(0);
    if budget < 1024 {
        return Some("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into());
    }
    if body["max_tokens"].as_u64().is_none_or(|max| max <= budget) {
        return Some("`max_tokens` must be greater than `thinking.budget_tokens`".into());
    }
    if body.get("temperature").is_some_and(|t| t.as_f64() != Some(1.0)) || body.get("top_k").is_some() {
        return Some("`temperature` and `top_k` may not be set when thinking is enabled".into());
    }
    if body.get("top_p").and_then(Value::as_f64).is_some_and(|p| p < 0.95) {
        return Some("`top_p` must be at least 0.95 when thinking is enabled".into());
    }
    if matches!(body["tool_choice"]["type"].as_str(), Some("any" | "tool")) {
        return Some("Thinking may not be enabled when tool_choice forces tool use.".into());
    }
    let messages = body["messages"].as_array()?;
    let answers_a_tool = messages.last()?["content"].as_array().is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"));
    let caller = messages.iter().rev().find(|m| m["role"] == "assistant")?;
    let first = &caller["content"][0];
    let signed = first["type"] == "thinking" && first["signature"] == THINKING_SIGNATURE && first["thinking"] == TOOL_THINKING;
    (answers_a_tool && !signed)
        .then(|| "messages: a final assistant message must start with a thinking block, as it was signed, when thinking is enabled".into())
}

/// `events` (one of Anthropic's replies) opening with a signed thinking block.
fn with_thinking(mut events: Vec<String>) -> Vec<String> {
    let event = |kind: &str, data: Value| format!("event: {kind}\ndata: {data}\n\n");
    let delta = |delta: Value| event("content_block_delta", json!({ "type": "content_block_delta", "index": 0, "delta": delta }));
    let block = [
        event(
            "content_block_start",
            json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "thinking", "thinking": "", "signature": "" } }),
        ),
        delta(json!({ "type": "thinking_delta", "thinking": TOOL_THINKING })),
        delta(json!({ "type": "signature_delta", "signature": THINKING_SIGNATURE })),
        event("content_block_stop", json!({ "type": "content_block_stop", "index": 0 })),
    ];
    events.splice(1..1, block);
    events
}

/// "Let me count." as reasoning, then "Four." as the answer, as the API streams reasoning apart.
fn thinker_events(api: Api) -> Vec<String> {
    match api {
        Api::OpenAi => {
            let reasoning = |text: &str| chunk(json!({ "content": null, "reasoning_content": text }), None);
            vec![
                chunk(json!({ "role": "assistant", "content": null }), None),
                reasoning("Let me "),
                reasoning("count."),
                delta(api, "Four."),
                chunk(json!({}), Some("stop")),
                format!(
                    "data: {}\n\n",
                    json!({ "id": "c1", "object": "chat.completion.chunk", "choices": [],
                    "usage": { "prompt_tokens": 21, "completion_tokens": 6, "total_tokens": 27,
                        "completion_tokens_details": { "reasoning_tokens": 4 } } })
                ),
                "data: [DONE]\n\n".into(),
            ]
        }
        Api::Anthropic => {
            let event = |kind: &str, data: Value| format!("event: {kind}\ndata: {data}\n\n");
            let block_delta = |index: u32, delta: Value| {
                event("content_block_delta", json!({ "type": "content_block_delta", "index": index, "delta": delta }))
            };
            let start = json!({ "type": "message_start", "message": { "id": "msg_1", "type": "message", "role": "assistant",
                "content": [], "model": "claude-fake", "stop_reason": null, "usage": { "input_tokens": 21, "output_tokens": 1 } } });
            vec![
                event("message_start", start),
                event(
                    "content_block_start",
                    json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "thinking", "thinking": "", "signature": "" } }),
                ),
                block_delta(0, json!({ "type": "thinking_delta", "thinking": "Let me " })),
                block_delta(0, json!({ "type": "thinking_delta", "thinking": "count." })),
                block_delta(0, json!({ "type": "signature_delta", "signature": THINKING_SIGNATURE })),
                event("content_block_stop", json!({ "type": "content_block_stop", "index": 0 })),
                event(
                    "content_block_start",
                    json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "text", "text": "" } }),
                ),
                block_delta(1, json!({ "type": "text_delta", "text": "Four." })),
                event("content_block_stop", json!({ "type": "content_block_stop", "index": 1 })),
                event(
                    "message_delta",
                    json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": 9 } }),
                ),
                event("message_stop", json!({ "type": "message_stop" })),
            ]
        }
    }
}

/// A reply that is one call of `name`, as the API streams it.
fn tool_call_events(api: Api, name: &str) -> Vec<String> {
    match api {
        Api::OpenAi => vec![
            opening(api),
            chunk(
                json!({ "tool_calls": [{ "index": 0, "id": "call_fake", "type": "function", "function": { "name": name, "arguments": "" } }] }),
                None,
            ),
            chunk(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"item\":" } }] }), None),
            chunk(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "\"kettle\"}" } }] }), None),
            chunk(json!({}), Some("tool_calls")),
            "data: [DONE]\n\n".into(),
        ],
        Api::Anthropic => {
            let event = |kind: &str, data: Value| format!("event: {kind}\ndata: {data}\n\n");
            let piece = |json: &str| {
                event(
                    "content_block_delta",
                    json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": json } }),
                )
            };
            vec![
                opening(api),
                event("content_block_stop", json!({ "type": "content_block_stop", "index": 0 })),
                event(
                    "content_block_start",
                    json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "tool_use", "id": "toolu_fake", "name": name, "input": {} } }),
                ),
                piece("{\"item\":"),
                piece("\"kettle\"}"),
                event("content_block_stop", json!({ "type": "content_block_stop", "index": 1 })),
                event(
                    "message_delta",
                    json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" }, "usage": { "output_tokens": 9 } }),
                ),
                event("message_stop", json!({ "type": "message_stop" })),
            ]
        }
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let data = json!({ "id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
    format!("data: {data}\n\n")
}
