//! One streamed reply over HTTP: send, check the answer, read its server-sent events through the
//! provider's parser, forward the text, and end with exactly one `Finished` or `Failed`. Cancel
//! drops the connection at once; a silent server times out.

use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{FutureExt, Stream, StreamExt};
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

use hearth_core::{CancelFlag, FinishReason, GenEvent, ProviderError, ReplyStats, TokenProbs};

use crate::body::{BODY_CAP, StreamFault, bounded_text, capped};
use crate::errors::Context;

/// Once text flows, events are read in gulps: a pause this long, then every event that has
/// arrived. A fast provider sends hundreds of events a second and each woke the app (the
/// network, its runtime's threads) on the cores a local model decodes on; the window takes the
/// text at most every `hearth_core::WINDOW_UPDATE_INTERVAL` (100 ms), so the wait shows nothing
/// later. The first event is read at once (time to first token); cancel is heard at any time.
const GULP_PAUSE: Duration = Duration::from_millis(30);
/// At most this many events a gulp.
const GULP_EVENTS: usize = 256;

/// How long to wait for the network.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    /// From sending the request to the answer's headers (the prompt is processed meanwhile).
    pub response: Duration,
    /// Longest silence between two events of a stream.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { connect: Duration::from_secs(10), response: Duration::from_secs(120), idle: Duration::from_secs(90) }
    }
}

/// What a provider's events said besides text.
#[derive(Debug, Default)]
pub struct Tally {
    pub finish: Option<FinishReason>,
    /// The stream's own end marker arrived (`[DONE]`, `message_stop`).
    pub done: bool,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub cached_tokens: Option<u32>,
    /// Of the completion's tokens, those the model reasoned with (when the API counts them).
    pub reasoning_tokens: Option<u32>,
    /// The provider's signature over the reasoning (Anthropic's thinking block).
    pub reasoning_signature: Option<String>,
    pub server_decode_tps: Option<f64>,
    /// Tokens with their probabilities not yet sent (when the server reports them).
    pub tokens: Vec<TokenProbs>,
}

pub enum EventError {
    /// Not the format the API documents.
    Malformed(String),
    /// The provider reported an error inside the stream (its JSON body).
    Remote(String),
}

/// Reads one API's events.
pub trait Parser: Send {
    /// The text an event adds, if any; other facts go into `tally`.
    fn on_event(&mut self, event: &Event, tally: &mut Tally) -> Result<Option<String>, EventError>;
}

/// A request ready to send.
pub struct Outgoing {
    pub request: reqwest::RequestBuilder,
    pub url: String,
    pub provider: String,
    pub model: String,
    pub key: Option<String>,
    pub dropped_messages: u32,
    pub prompt_estimate: u32,
}

/// Streams one reply into `events`.
pub async fn run(
    outgoing: Outgoing,
    mut parser: Box<dyn Parser>,
    timeouts: Timeouts,
    cancel: CancelFlag,
    events: UnboundedSender<GenEvent>,
) {
    let context = Context { provider: &outgoing.provider, model: &outgoing.model, key: outgoing.key.as_deref() };
    let started = Instant::now();
    let finish = |reason, stats| {
        let _ = events.send(GenEvent::Finished { reason, stats });
    };
    let fail = |error: ProviderError| {
        tracing::warn!(provider = %outgoing.provider, error = %error, "remote reply failed");
        let _ = events.send(GenEvent::Failed(error.into()));
    };

    let sent = tokio::select! {
        _ = cancel.cancelled() => return finish(FinishReason::Cancelled, ReplyStats::default()),
        sent = tokio::time::timeout(timeouts.response, outgoing.request.send()) => sent,
    };
    let response = match sent {
        Err(_) => return fail(context.timeout(timeouts.response)),
        Ok(Err(e)) => return fail(context.for_transport(&e, &outgoing.url, timeouts.connect)),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        let headers = response.headers().clone();
        let Some(body) = bounded_text(response, BODY_CAP, timeouts.idle, &cancel).await else {
            return finish(FinishReason::Cancelled, ReplyStats::default());
        };
        return fail(context.for_status(status, &headers, &body.text));
    }
    let content_type = response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    if !content_type.contains("event-stream") {
        // Its beginning says what it is; the rest (it may be endless, or trickle) is not read.
        let Some(body) = bounded_text(response, BODY_CAP, timeouts.idle, &cancel).await else {
            return finish(FinishReason::Cancelled, ReplyStats::default());
        };
        return fail(context.malformed(format!("expected an event stream, got {content_type:?}: {}", body.text)));
    }

    let mut stream = capped(response.bytes_stream()).eventsource();
    let mut tally = Tally::default();
    let mut first_token: Option<Instant> = None;
    let mut last_token = started;
    let mut deltas = 0u32;
    let mut ended = false;
    while !ended {
        if first_token.is_some() {
            tokio::select! {
                _ = cancel.cancelled() => break,
                _ = tokio::time::sleep(GULP_PAUSE) => {}
            }
        }
        let next = tokio::select! {
            // Dropping the stream closes the connection: the server stops generating.
            _ = cancel.cancelled() => break,
            next = tokio::time::timeout(timeouts.idle, arrived(&mut stream, GULP_EVENTS)) => next,
        };
        let gulp = match next {
            Err(_) => return fail(context.timeout(timeouts.idle)),
            Ok(None) => break,
            Ok(Some((gulp, stream_ended))) => {
                ended = stream_ended;
                gulp
            }
        };
        // The gulp's text goes as one delta, its tokens just before it (as the engine sends them).
        let now = Instant::now();
        let mut text = String::new();
        let mut tokens: Vec<TokenProbs> = Vec::new();
        let mut failure = None;
        for event in gulp {
            if cancel.is_cancelled() {
                break; // Stopped: nothing more of what had arrived is shown.
            }
            let event = match event {
                Err(EventStreamError::Transport(StreamFault::TooLong(what))) => {
                    failure = Some(context.malformed(format!("it sent {what}")));
                    break;
                }
                Err(EventStreamError::Transport(StreamFault::Transport(e))) => {
                    tracing::debug!(error = %e, "stream broke");
                    failure = Some(context.stream_cut());
                    break;
                }
                Err(e) => {
                    failure = Some(context.malformed(format!("an unreadable event: {e}")));
                    break;
                }
                Ok(event) => event,
            };
            let read = parser.on_event(&event, &mut tally);
            tokens.append(&mut tally.tokens);
            match read {
                Ok(Some(delta)) => {
                    first_token.get_or_insert(now);
                    last_token = now;
                    deltas += 1;
                    text.push_str(&delta);
                }
                Ok(None) => {}
                Err(EventError::Malformed(what)) => failure = Some(context.malformed(what)),
                Err(EventError::Remote(body)) => failure = Some(context.for_stream_error(&body)),
            }
            if failure.is_some() || tally.done {
                break;
            }
        }
        if !tokens.is_empty() && events.send(GenEvent::TokenProbs(tokens)).is_err() {
            return;
        }
        if !text.is_empty() && events.send(GenEvent::Delta(text)).is_err() {
            return; // nobody listens any more
        }
        if let Some(error) = failure {
            return fail(error);
        }
        if tally.done || cancel.is_cancelled() {
            break;
        }
    }

    let cancelled = cancel.is_cancelled() && !tally.done;
    if !cancelled && tally.finish.is_none() && !tally.done {
        return fail(context.stream_cut());
    }
    let completion = tally.completion_tokens.unwrap_or(deltas);
    let ttft = first_token.map(|t| (t - started).as_secs_f64() * 1000.0).unwrap_or(0.0);
    let decode_secs = first_token.map(|t| (last_token - t).as_secs_f64()).unwrap_or(0.0);
    let stats = ReplyStats {
        prompt_tokens: tally.prompt_tokens.unwrap_or(outgoing.prompt_estimate),
        cached_tokens: tally.cached_tokens.unwrap_or(0),
        completion_tokens: completion,
        ttft_ms: ttft,
        decode_tps: tally
            .server_decode_tps
            .unwrap_or_else(|| if decode_secs > 0.0 { f64::from(completion.saturating_sub(1)) / decode_secs } else { 0.0 }),
        dropped_messages: outgoing.dropped_messages,
        cut_at_limit: false,
        // A provider's own prompt cache is not ours to name.
        prompt_source: hearth_core::PromptSource::New,
        reasoning_tokens: tally.reasoning_tokens,
        reasoning_signature: tally.reasoning_signature.take(),
        ..ReplyStats::default()
    };
    let reason = if cancelled { FinishReason::Cancelled } else { tally.finish.unwrap_or(FinishReason::EndOfTurn) };
    finish(reason, stats)
}

/// The next item of `stream`, waited for, and every one after it that has already arrived (at
/// most `most` in all); and whether the stream ended. `None`: it had ended already.
///
/// hyper's client hands a body over one HTTP chunk per poll, fetching the next only when asked
/// (by its connection task), so "arrived" is found by asking again after letting that task run,
/// until it has nothing more without the network.
async fn arrived<S: Stream + Unpin>(stream: &mut S, most: usize) -> Option<(Vec<S::Item>, bool)> {
    let first = stream.next().await?;
    let mut items = vec![first];
    let mut misses = 0;
    while items.len() < most && misses < 2 {
        tokio::task::yield_now().await;
        match stream.next().now_or_never() {
            Some(Some(item)) => {
                items.push(item);
                misses = 0;
            }
            Some(None) => return Some((items, true)),
            None => misses += 1,
        }
    }
    Some((items, false))
}
