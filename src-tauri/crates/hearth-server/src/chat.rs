//! `/v1/models` and `/v1/chat/completions`: a request becomes a reply of the engine, answered
//! whole or streamed as server-sent events (the role first, content deltas, the finish reason,
//! usage when asked, then `[DONE]`). A client that goes away stops its reply.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::Uri;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use hearth_core::{CancelFlag, ChatBackend, FinishReason, GenEvent, ReplyRequest, ReplyStats, TokenChoice, TokenLogprob};

use crate::error::ApiError;
use crate::log::Entry;
use crate::request::ChatRequest;
use crate::{ServerState, unix_now};

pub async fn models(State(state): State<ServerState>) -> Json<Value> {
    let data: Vec<Value> = state
        .engine
        .loaded()
        .map(|model| json!({ "id": model.name, "object": "model", "created": state.started, "owned_by": "hearth" }))
        .into_iter()
        .collect();
    Json(json!({ "object": "list", "data": data }))
}

pub async fn no_such_endpoint(uri: Uri) -> ApiError {
    ApiError::not_found(uri.path())
}

pub async fn chat_completions(State(state): State<ServerState>, ConnectInfo(client): ConnectInfo<SocketAddr>, body: Bytes) -> Response {
    let mut entry = Some(Entry::start(&state.log, client.to_string()));
    match answer(&state, &body, &mut entry).await {
        Ok(response) => response,
        Err(error) => {
            tracing::info!(%client, status = error.status, error = %error.message, "chat completion refused");
            if let Some(mut entry) = entry {
                entry.finish(error.status, None);
            }
            error.into_response()
        }
    }
}

/// What the reply is made of once the engine has accepted it.
struct Reply {
    id: String,
    created: u64,
    model: String,
    events: UnboundedReceiver<GenEvent>,
    /// The first event, already received: an early refusal is the request's error, not a stream's.
    first: GenEvent,
    /// Raised when the response is dropped (the client went away): the engine stops the reply.
    _stop: StopOnDrop,
    /// The request's line in the log, written when the reply ends (499 if it is dropped first).
    entry: Entry,
}

/// Answers a request; `entry` moves into the reply once the engine has accepted it.
async fn answer(state: &ServerState, body: &[u8], entry: &mut Option<Entry>) -> Result<Response, ApiError> {
    let request = ChatRequest::parse(body)?;
    if let Some(entry) = entry.as_mut() {
        entry.model(&request.model);
    }
    let messages = request.messages()?;
    let sampling = request.sampling(&state.sampling)?;
    let loaded = state.engine.loaded().map(|m| m.name);
    let model = match loaded {
        Some(loaded) if loaded == request.model => loaded,
        _ => return Err(ApiError::model_not_found(&request.model, state.engine.loaded().as_ref().map(|m| m.name.as_str()))),
    };
    let cancel = CancelFlag::new();
    let mut reply = ReplyRequest::new(messages, sampling, cancel.clone());
    reply.logprobs = request.logprobs()?;
    let stream = state.engine.start_reply(reply)?;
    let stop = StopOnDrop(cancel);
    let mut events = stream.events;
    let first = events.recv().await.ok_or_else(|| ApiError::server("the engine ended the reply without a word"))?;
    if let GenEvent::Failed(error) = first {
        return Err(error.into());
    }
    let id = format!("chatcmpl-{}", state.next_id.fetch_add(1, Ordering::Relaxed));
    tracing::info!(%id, %model, stream = request.stream, "chat completion");
    let entry = entry.take().expect("taken only here");
    let reply = Reply { id, created: unix_now(), model, events, first, _stop: stop, entry };
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
async fn whole(reply: Reply) -> Result<Json<Value>, ApiError> {
    let Reply { id, created, model, mut events, first, _stop, mut entry } = reply;
    let mut text = String::new();
    let mut logprobs: Option<Vec<Value>> = None;
    let mut next = Some(first);
    loop {
        let event = match next.take() {
            Some(event) => Some(event),
            None => events.recv().await,
        };
        match event {
            Some(GenEvent::Delta(delta)) => text.push_str(&delta),
            Some(GenEvent::Logprobs(tokens)) => logprobs.get_or_insert_default().extend(tokens.iter().map(token_logprob)),
            Some(GenEvent::Finished { reason, stats }) => {
                entry.finish(200, Some(&stats));
                return Ok(Json(json!({
                    "id": id,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "system_fingerprint": null,
                    "choices": [{
                        "index": 0,
                        "message": { "role": "assistant", "content": text, "refusal": null },
                        "logprobs": logprobs.map(|content| json!({ "content": content, "refusal": null })),
                        "finish_reason": finish_reason(reason),
                    }],
                    "usage": usage(&stats),
                })));
            }
            Some(GenEvent::Failed(error)) => {
                let error = ApiError::from(error);
                entry.finish(error.status, None);
                return Err(error);
            }
            None => {
                entry.finish(500, None);
                return Err(ApiError::server("the engine ended the reply without finishing it"));
            }
        }
    }
}

/// The reply as `chat.completion.chunk` events.
fn chunks(reply: Reply, include_usage: bool) -> impl Stream<Item = Result<Event, Infallible>> {
    let Reply { id, created, model, events, first, _stop, entry } = reply;
    let chunk: MakeChunk = Box::new(move |delta, finish, logprobs| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model, "system_fingerprint": null,
            "choices": [{ "index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish }],
        })
    });
    let opening = chunk(json!({ "role": "assistant", "content": "" }), None, Value::Null).to_string();
    let state = Chunks {
        events,
        next: Some(first),
        pending: VecDeque::from([opening]),
        logprobs: Vec::new(),
        done: false,
        include_usage,
        chunk,
        _stop,
        entry,
    };
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
                None => s.events.recv().await,
            };
            s.take(event);
        }
    })
}

/// A chunk from its delta, finish reason and log-probabilities.
type MakeChunk = Box<dyn Fn(Value, Option<&str>, Value) -> Value + Send>;

struct Chunks {
    events: UnboundedReceiver<GenEvent>,
    next: Option<GenEvent>,
    /// `data:` payloads ready to send.
    pending: VecDeque<String>,
    /// Log-probabilities of the tokens of the next delta (they come just before it).
    logprobs: Vec<Value>,
    done: bool,
    include_usage: bool,
    chunk: MakeChunk,
    _stop: StopOnDrop,
    entry: Entry,
}

impl Chunks {
    fn take(&mut self, event: Option<GenEvent>) {
        match event {
            Some(GenEvent::Delta(text)) => {
                let logprobs = self.take_logprobs();
                self.pending.push_back((self.chunk)(json!({ "content": text }), None, logprobs).to_string());
            }
            Some(GenEvent::Logprobs(tokens)) => self.logprobs.extend(tokens.iter().map(token_logprob)),
            Some(GenEvent::Finished { reason, stats }) => {
                self.entry.finish(200, Some(&stats));
                let logprobs = self.take_logprobs();
                self.pending.push_back((self.chunk)(json!({}), Some(finish_reason(reason)), logprobs).to_string());
                if self.include_usage {
                    let mut last = (self.chunk)(json!({}), None, Value::Null);
                    last["choices"] = json!([]);
                    last["usage"] = usage(&stats);
                    self.pending.push_back(last.to_string());
                }
                self.pending.push_back("[DONE]".into());
                self.done = true;
            }
            Some(GenEvent::Failed(error)) => {
                // Mid-stream the status is sent already: the error travels as an event (clients raise it).
                let error = ApiError::from(error);
                self.entry.finish(error.status, None);
                self.pending.push_back(error.body().to_string());
                self.done = true;
            }
            None => {
                self.entry.finish(500, None);
                self.pending.push_back(ApiError::server("the engine ended the reply without finishing it").body().to_string());
                self.done = true;
            }
        }
    }
}

impl Chunks {
    /// The log-probabilities waiting for a chunk, in OpenAI's shape (null when none).
    fn take_logprobs(&mut self) -> Value {
        if self.logprobs.is_empty() {
            return Value::Null;
        }
        json!({ "content": std::mem::take(&mut self.logprobs), "refusal": null })
    }
}

/// A token in OpenAI's `logprobs.content` shape.
fn token_logprob(token: &TokenLogprob) -> Value {
    let choice = |c: &TokenChoice| json!({ "token": String::from_utf8_lossy(&c.bytes), "logprob": c.logprob, "bytes": c.bytes });
    let mut entry = choice(&token.token);
    entry["top_logprobs"] = token.top.iter().map(choice).collect();
    entry
}

fn finish_reason(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Length => "length",
        FinishReason::EndOfTurn | FinishReason::StopString | FinishReason::Cancelled => "stop",
    }
}

fn usage(stats: &ReplyStats) -> Value {
    json!({
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
        "total_tokens": stats.prompt_tokens + stats.completion_tokens,
        "prompt_tokens_details": { "cached_tokens": stats.cached_tokens },
    })
}
