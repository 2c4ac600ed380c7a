//! `/v1/models`, `/v1/chat/completions` and `/v1/completions`: a request becomes a reply of the
//! engine, answered whole or streamed as server-sent events (a chat's role first, text as it
//! comes, the finish reason, usage when asked, then `[DONE]`). A client that goes away stops its
//! reply.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::Uri;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use hearth_core::{
    CallEvent, CallStream, CancelFlag, ChatBackend, FinishReason, GenEvent, ReadCalls, ReasoningStream, ReplyParts, ReplyPiece,
    ReplyRequest, ReplyStats, TokenChoice, TokenLogprob, ToolChoice, read_calls, split_reasoning,
};

use crate::error::ApiError;
use crate::library::ModelLease;
use crate::log::Entry;
use crate::request::{ChatRequest, CompletionRequest};
use crate::serve::QueueSlot;
use crate::{Exchange, OnExchange, ServerState, unix_now};

pub async fn models(State(state): State<ServerState>) -> Json<Value> {
    let data: Vec<Value> = state
        .model_ids()
        .into_iter()
        .map(|id| json!({ "id": id, "object": "model", "created": state.started, "owned_by": "hearth" }))
        .collect();
    Json(json!({ "object": "list", "data": data }))
}

pub async fn no_such_endpoint(uri: Uri) -> ApiError {
    ApiError::not_found(uri.path())
}

pub async fn chat_completions(state: State<ServerState>, client: ConnectInfo<SocketAddr>, body: Body) -> Response {
    respond(state, client, body, Shape::Chat).await
}

pub async fn completions(state: State<ServerState>, client: ConnectInfo<SocketAddr>, body: Body) -> Response {
    respond(state, client, body, Shape::Text).await
}

async fn respond(State(state): State<ServerState>, ConnectInfo(client): ConnectInfo<SocketAddr>, body: Body, shape: Shape) -> Response {
    let mut entry = Some(Entry::start(&state.log, client.to_string()));
    let answered = async {
        // A slot first: a flood is turned away before its bodies are read.
        let slot = state.queue.enter()?;
        let body = state.queue.read_body(body).await?;
        answer(&state, &body, shape, &mut entry, slot).await
    };
    match answered.await {
        Ok(response) => response,
        Err(error) => {
            tracing::info!(%client, status = error.status, error = %error.message, "completion refused");
            if let Some(mut entry) = entry {
                entry.finish(error.status, None);
            }
            error.into_response()
        }
    }
}

/// The two APIs' shapes of the same reply: a chat message, or text that continues a prompt.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Chat,
    Text,
}

impl Shape {
    fn object(self, streamed: bool) -> &'static str {
        match (self, streamed) {
            (Shape::Chat, false) => "chat.completion",
            (Shape::Chat, true) => "chat.completion.chunk",
            (Shape::Text, _) => "text_completion",
        }
    }

    /// The choice of a whole reply (`streamed` false) or of a chunk.
    fn choice(self, streamed: bool, text: &str, logprobs: Value, finish: Option<&str>) -> Value {
        match (self, streamed) {
            (Shape::Chat, false) => json!({
                "index": 0,
                "message": { "role": "assistant", "content": text, "refusal": null },
                "logprobs": logprobs,
                "finish_reason": finish,
            }),
            (Shape::Chat, true) => {
                let delta = if finish.is_some() { json!({}) } else { json!({ "content": text }) };
                json!({ "index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish })
            }
            (Shape::Text, _) => json!({ "index": 0, "text": text, "logprobs": logprobs, "finish_reason": finish }),
        }
    }

    /// Tokens' log-probabilities as each API has them; `offset` is where the text so far ends.
    fn logprobs(self, tokens: &[TokenLogprob], offset: &mut usize) -> Value {
        if tokens.is_empty() {
            return Value::Null;
        }
        let piece = |c: &TokenChoice| String::from_utf8_lossy(&c.bytes).into_owned();
        match self {
            Shape::Chat => {
                let choice = |c: &TokenChoice| json!({ "token": piece(c), "logprob": c.logprob, "bytes": c.bytes });
                let content: Vec<Value> = tokens
                    .iter()
                    .map(|t| {
                        let mut entry = choice(&t.token);
                        entry["top_logprobs"] = t.top.iter().map(choice).collect();
                        entry
                    })
                    .collect();
                json!({ "content": content, "refusal": null })
            }
            // The legacy completions API: parallel lists, alternatives as a map from token to logprob.
            Shape::Text => {
                let offsets: Vec<usize> = tokens
                    .iter()
                    .map(|t| {
                        let at = *offset;
                        *offset += piece(&t.token).len();
                        at
                    })
                    .collect();
                json!({
                    "tokens": tokens.iter().map(|t| piece(&t.token)).collect::<Vec<_>>(),
                    "token_logprobs": tokens.iter().map(|t| t.token.logprob).collect::<Vec<_>>(),
                    "top_logprobs": tokens.iter().map(|t| t.top.iter().map(|c| (piece(c), json!(c.logprob))).collect::<serde_json::Map<_, _>>()).collect::<Vec<_>>(),
                    "text_offset": offsets,
                })
            }
        }
    }
}

/// What the reply is made of once the engine has accepted it.
struct Reply {
    shape: Shape,
    id: String,
    created: u64,
    /// Held until the reply ends, so no request loads another model under it.
    model: ModelLease,
    events: UnboundedReceiver<GenEvent>,
    /// The first event, already received: an early refusal is the request's error, not a stream's.
    first: GenEvent,
    /// Raised when the response is dropped (the client went away): the engine stops the reply.
    _stop: StopOnDrop,
    /// The request's line in the log, written when the reply ends (499 if it is dropped first).
    entry: Entry,
    /// The request and the text so far, for `on_exchange` (only when one is set).
    exchange: Option<(OnExchange, Exchange)>,
    /// The request's place among those in flight, given back when the reply ends.
    _slot: QueueSlot,
    /// Tools were offered: the calls in the text are answered as `tool_calls`.
    calls: bool,
    /// A chat reply's leading reasoning block is answered apart, as `reasoning_content`.
    reasoning_apart: bool,
}

impl Reply {
    /// The reply ended in full: the log and the exchange hook are told.
    fn finished(&mut self, stats: &ReplyStats) {
        self.entry.finish(200, Some(stats));
        if let Some((on_exchange, mut exchange)) = self.exchange.take() {
            exchange.stats = stats.clone();
            on_exchange(exchange);
        }
    }

    fn wrote(&mut self, text: &str) {
        if let Some((_, exchange)) = self.exchange.as_mut() {
            exchange.reply.push_str(text);
        }
    }

    /// The calls read out of a reply, as OpenAI lists them (streamed deltas carry `index` too).
    fn tool_calls(&self, read: &ReadCalls) -> Vec<Value> {
        read.calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                json!({
                    "index": i, "id": self.call_id(i), "type": "function",
                    "function": { "name": call.name, "arguments": call.arguments },
                })
            })
            .collect()
    }

    /// Call `index`'s id: the same whole or streamed.
    fn call_id(&self, index: usize) -> String {
        format!("call_{}_{index}", self.id)
    }

    fn body(&self, streamed: bool, choices: Value) -> Value {
        json!({
            "id": self.id, "object": self.shape.object(streamed), "created": self.created, "model": self.model.name,
            "system_fingerprint": null, "choices": choices,
        })
    }
}

/// Answers a request; `entry` moves into the reply once the engine has accepted it.
async fn answer(state: &ServerState, body: &[u8], shape: Shape, entry: &mut Option<Entry>, slot: QueueSlot) -> Result<Response, ApiError> {
    let (request, raw_prompt, logprobs) = match shape {
        Shape::Chat => {
            let request = ChatRequest::parse(body)?;
            let logprobs = request.logprobs()?;
            (request, None, logprobs)
        }
        Shape::Text => {
            let CompletionRequest { chat, prompt, logprobs } = CompletionRequest::parse(body)?;
            (chat, Some(prompt), logprobs)
        }
    };
    if let Some(entry) = entry.as_mut() {
        entry.model(&request.model);
    }
    let messages = if raw_prompt.is_some() { Vec::new() } else { request.messages()? };
    let exchange = state.on_exchange.clone().map(|hook| {
        let client = entry.as_ref().map(|e| e.client().to_owned()).unwrap_or_default();
        let exchange = Exchange {
            client,
            model: request.model.clone(),
            messages: messages.clone(),
            prompt: raw_prompt.clone(),
            reply: String::new(),
            stats: ReplyStats::default(),
        };
        (hook, exchange)
    });
    let sampling = request.sampling(&state.sampling)?;
    let model = state.lease_model(&request.model).await?;
    let cancel = CancelFlag::new();
    let tools = if shape == Shape::Chat { request.tools()? } else { None };
    let calls = tools.as_ref().is_some_and(|t| t.choice != ToolChoice::None);
    let mut reply = ReplyRequest::new(messages, sampling, cancel.clone());
    reply.logprobs = logprobs;
    reply.raw_prompt = raw_prompt;
    reply.tools = tools;
    reply.template_kwargs = request.template_kwargs()?;
    let stream = state.engine.start_reply(reply)?;
    let stop = StopOnDrop(cancel);
    let mut events = stream.events;
    let first = events.recv().await.ok_or_else(|| ApiError::server("the engine ended the reply without a word"))?;
    if let GenEvent::Failed(error) = first {
        return Err(error.into());
    }
    let prefix = if shape == Shape::Chat { "chatcmpl" } else { "cmpl" };
    let id = format!("{prefix}-{}", state.next_id.fetch_add(1, Ordering::Relaxed));
    tracing::info!(%id, model = %model.name, stream = request.stream, "completion");
    let entry = entry.take().expect("taken only here");
    let reasoning_apart = shape == Shape::Chat && request.reasoning_apart();
    let reply =
        Reply { shape, id, created: unix_now(), model, events, first, _stop: stop, entry, exchange, _slot: slot, calls, reasoning_apart };
    if request.stream {
        let include_usage = request.stream_options.as_ref().is_some_and(|o| o.include_usage);
        Ok(Sse::new(chunks(reply, include_usage)).into_response())
    } else {
        whole(reply).await.map(IntoResponse::into_response)
    }
}

struct StopOnDrop(CancelFlag);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// The reply in one response.
async fn whole(mut reply: Reply) -> Result<Json<Value>, ApiError> {
    let mut text = String::new();
    let mut tokens: Vec<TokenLogprob> = Vec::new();
    let mut next = Some(std::mem::replace(&mut reply.first, GenEvent::Delta(String::new())));
    loop {
        let event = match next.take() {
            Some(event) => Some(event),
            None => reply.events.recv().await,
        };
        match event {
            Some(GenEvent::Delta(delta)) => {
                reply.wrote(&delta);
                text.push_str(&delta);
            }
            Some(GenEvent::Logprobs(more)) => tokens.extend(more),
            // The server never asks for the inspector's distributions.
            // The search's progress: the reply comes whole when it ends.
            Some(GenEvent::TokenProbs(_) | GenEvent::Searching { .. }) => {}
            Some(GenEvent::Finished { reason, stats }) => {
                reply.finished(&stats);
                let logprobs = reply.shape.logprobs(&tokens, &mut 0);
                let parts = if reply.reasoning_apart {
                    split_reasoning(&text)
                } else {
                    ReplyParts { reasoning: None, closed: false, answer: &text }
                };
                let mut choice = reply.shape.choice(false, parts.answer, logprobs, Some(finish_reason(reason)));
                if let Some(reasoning) = parts.reasoning {
                    choice["message"]["reasoning_content"] = reasoning.into();
                }
                let read = if reply.calls { read_calls(parts.answer) } else { ReadCalls::default() };
                if !read.calls.is_empty() {
                    let content = if read.content.is_empty() { Value::Null } else { read.content.clone().into() };
                    choice["message"]["content"] = content;
                    choice["message"]["tool_calls"] = reply.tool_calls(&read).into();
                    if reason != FinishReason::Length {
                        choice["finish_reason"] = "tool_calls".into();
                    }
                }
                let mut body = reply.body(false, json!([choice]));
                body["usage"] = usage(&stats);
                return Ok(Json(body));
            }
            Some(GenEvent::Failed(error)) => {
                let error = ApiError::from(error);
                reply.entry.finish(error.status, None);
                return Err(error);
            }
            None => {
                reply.entry.finish(500, None);
                return Err(ApiError::server("the engine ended the reply without finishing it"));
            }
        }
    }
}

/// The reply as chunk events: a chat's role first, then text as it comes, the finish reason,
/// usage when asked for, and `[DONE]`.
fn chunks(mut reply: Reply, include_usage: bool) -> impl Stream<Item = Result<Event, Infallible>> {
    let mut pending = VecDeque::new();
    if reply.shape == Shape::Chat {
        let opening = json!({ "index": 0, "delta": { "role": "assistant", "content": "" }, "logprobs": null, "finish_reason": null });
        pending.push_back(reply.body(true, json!([opening])).to_string());
    }
    let first = std::mem::replace(&mut reply.first, GenEvent::Delta(String::new()));
    let calls = reply.calls.then(CallStream::new);
    let reasoning = reply.reasoning_apart.then(ReasoningStream::new);
    let state = Chunks { reply, next: Some(first), pending, tokens: Vec::new(), offset: 0, done: false, include_usage, calls, reasoning };
    futures_util::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(data) = s.pending.pop_front() {
                return Some((Ok(Event::default().data(data)), s));
            }
            if s.done {
                return None;
            }
            let event = match s.next.take() {
                Some(event) => Some(event),
                None => s.reply.events.recv().await,
            };
            s.take(event);
        }
    })
}

struct Chunks {
    reply: Reply,
    next: Option<GenEvent>,
    /// `data:` payloads ready to send.
    pending: VecDeque<String>,
    /// The tokens of the next delta (their log-probabilities come just before it).
    tokens: Vec<TokenLogprob>,
    /// Where the text sent so far ends (the legacy API's `text_offset`).
    offset: usize,
    done: bool,
    include_usage: bool,
    /// With tools offered: the text read for calls as they are written.
    calls: Option<CallStream>,
    /// A chat reply's text read for its reasoning block, answered apart.
    reasoning: Option<ReasoningStream>,
}

impl Chunks {
    fn push(&mut self, text: &str, finish: Option<&str>) {
        let tokens = std::mem::take(&mut self.tokens);
        let logprobs = self.reply.shape.logprobs(&tokens, &mut self.offset);
        let choice = self.reply.shape.choice(true, text, logprobs, finish);
        self.pending.push_back(self.reply.body(true, json!([choice])).to_string());
    }

    /// Text as content; a call as OpenAI streams one: its id, type and name first, then its
    /// arguments in pieces, each delta with the call's index.
    fn say(&mut self, events: Vec<CallEvent>) {
        for event in events {
            let call = match event {
                CallEvent::Text(text) => {
                    self.push(&text, None);
                    continue;
                }
                CallEvent::Opened { index, name } => {
                    json!({ "index": index, "id": self.reply.call_id(index), "type": "function", "function": { "name": name, "arguments": "" } })
                }
                CallEvent::Arguments { index, fragment } => json!({ "index": index, "function": { "arguments": fragment } }),
            };
            let choice = json!({ "index": 0, "delta": { "tool_calls": [call] }, "logprobs": null, "finish_reason": null });
            self.pending.push_back(self.reply.body(true, json!([choice])).to_string());
        }
    }

    /// Reasoning as `reasoning_content`; the answer as content, or calls.
    fn answer(&mut self, pieces: Vec<ReplyPiece>) {
        for piece in pieces {
            match piece {
                ReplyPiece::Reasoning(reasoning) => {
                    let tokens = std::mem::take(&mut self.tokens);
                    let logprobs = self.reply.shape.logprobs(&tokens, &mut self.offset);
                    let choice =
                        json!({ "index": 0, "delta": { "reasoning_content": reasoning }, "logprobs": logprobs, "finish_reason": null });
                    self.pending.push_back(self.reply.body(true, json!([choice])).to_string());
                }
                ReplyPiece::Answer(text) => match self.calls.as_mut() {
                    None => self.push(&text, None),
                    Some(calls) => {
                        let events = calls.push(&text);
                        self.say(events);
                    }
                },
            }
        }
    }

    fn take(&mut self, event: Option<GenEvent>) {
        match event {
            Some(GenEvent::Delta(text)) => {
                self.reply.wrote(&text);
                let pieces = match self.reasoning.as_mut() {
                    Some(reasoning) => reasoning.push(&text),
                    None => vec![ReplyPiece::Answer(text)],
                };
                self.answer(pieces);
            }
            Some(GenEvent::Logprobs(tokens)) => self.tokens.extend(tokens),
            // The search's progress: the reply comes whole when it ends.
            Some(GenEvent::TokenProbs(_) | GenEvent::Searching { .. }) => {}
            Some(GenEvent::Finished { reason, stats }) => {
                self.reply.finished(&stats);
                let mut finish = finish_reason(reason);
                if let Some(mut reasoning) = self.reasoning.take() {
                    let pieces = reasoning.finish();
                    self.answer(pieces);
                }
                if let Some(calls) = self.calls.take() {
                    let (events, count) = calls.finish();
                    self.say(events);
                    if count > 0 && reason != FinishReason::Length {
                        finish = "tool_calls";
                    }
                }
                self.push("", Some(finish));
                if self.include_usage {
                    let mut last = self.reply.body(true, json!([]));
                    last["usage"] = usage(&stats);
                    self.pending.push_back(last.to_string());
                }
                self.pending.push_back("[DONE]".into());
                self.done = true;
            }
            Some(GenEvent::Failed(error)) => {
                // Mid-stream the status is sent already: the error travels as an event (clients raise it).
                let error = ApiError::from(error);
                self.reply.entry.finish(error.status, None);
                self.pending.push_back(error.body().to_string());
                self.done = true;
            }
            None => {
                self.reply.entry.finish(500, None);
                self.pending.push_back(ApiError::server("the engine ended the reply without finishing it").body().to_string());
                self.done = true;
            }
        }
    }
}

fn finish_reason(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Length => "length",
        FinishReason::EndOfTurn | FinishReason::StopString | FinishReason::Cancelled => "stop",
    }
}

fn usage(stats: &ReplyStats) -> Value {
    let mut usage = json!({
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
        "total_tokens": stats.prompt_tokens + stats.completion_tokens,
        "prompt_tokens_details": { "cached_tokens": stats.cached_tokens },
    });
    if let Some(reasoning) = stats.reasoning_tokens {
        usage["completion_tokens_details"] = json!({ "reasoning_tokens": reasoning });
    }
    usage
}
