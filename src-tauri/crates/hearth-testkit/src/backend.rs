//! A `ChatBackend` whose replies follow scripts: text after a delay, a failure, an end.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_core::{BackendError, ChatBackend, FinishReason, GenEvent, ReplyRequest, ReplyStats, ReplyStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// One step of a scripted reply.
#[derive(Debug, Clone)]
pub enum Step {
    /// Waits this long (on tokio's clock), then sends the text.
    Text(Duration, String),
    /// Waits this long, then says how far a search has got (`GenEvent::Searching`).
    Searching(Duration, u32),
    /// Ends the reply.
    Finish(FinishReason),
    /// Fails the reply.
    Fail(BackendError),
    /// Goes silent until the reply is cancelled (then finishes `Cancelled`).
    Hang,
}

impl Step {
    pub fn text(after_ms: u64, text: &str) -> Step {
        Step::Text(Duration::from_millis(after_ms), text.to_owned())
    }
}

/// A request the backend was given, and when.
#[derive(Debug, Clone)]
pub struct Asked {
    pub at: Instant,
    pub messages: Vec<hearth_core::ChatMessage>,
    pub conversation: Option<hearth_core::ChatId>,
    pub continue_last: bool,
    /// Whether it came through [`ChatBackend::prefill`].
    pub prefill: bool,
    /// The tools it offered.
    pub tools: Option<hearth_core::OfferedTools>,
}

/// The replies still to play, each a script or a refusal.
type Scripts = Arc<Mutex<VecDeque<Result<Vec<Step>, BackendError>>>>;

/// Plays one script per reply asked for, in order; with none left, refuses the request.
#[derive(Clone, Default)]
pub struct ScriptedBackend {
    scripts: Scripts,
    asked: Arc<Mutex<Vec<Asked>>>,
    context: Arc<Mutex<Option<u32>>>,
}

impl ScriptedBackend {
    pub fn new() -> Self {
        Self::default()
    }

    /// The next reply asked for plays `steps`.
    pub fn then(&self, steps: Vec<Step>) -> &Self {
        self.scripts.lock().unwrap().push_back(Ok(steps));
        self
    }

    /// The next reply asked for is refused with `error`.
    pub fn then_refuse(&self, error: BackendError) -> &Self {
        self.scripts.lock().unwrap().push_back(Err(error));
        self
    }

    /// Says its model's context holds `tokens` (`None`: not known, as a remote model's).
    pub fn set_context_tokens(&self, tokens: Option<u32>) {
        *self.context.lock().unwrap() = tokens;
    }

    /// Every request so far, replies and read-aheads.
    pub fn asked(&self) -> Vec<Asked> {
        self.asked.lock().unwrap().clone()
    }

    fn note(&self, request: &ReplyRequest, prefill: bool) {
        self.asked.lock().unwrap().push(Asked {
            at: Instant::now(),
            messages: request.messages.clone(),
            conversation: request.conversation,
            continue_last: request.continue_last,
            prefill,
            tools: request.tools.clone(),
        });
    }
}

impl ChatBackend for ScriptedBackend {
    fn start_reply(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError> {
        self.note(&request, false);
        let script = self.scripts.lock().unwrap().pop_front().unwrap_or(Err(BackendError::NoModel))?;
        let (events, receiver) = mpsc::unbounded_channel();
        tokio::spawn(play(script, request, events));
        Ok(ReplyStream { model: "scripted".into(), events: receiver })
    }

    fn prefill(&self, request: ReplyRequest) -> hearth_core::ReadAhead {
        self.note(&request, true);
        hearth_core::ReadAhead::ended()
    }

    fn context_tokens(&self, _target: &hearth_core::ModelTarget) -> Option<u32> {
        *self.context.lock().unwrap()
    }
}

async fn play(steps: Vec<Step>, request: ReplyRequest, events: mpsc::UnboundedSender<GenEvent>) {
    let cancel = request.cancel;
    let cancelled = || GenEvent::Finished { reason: FinishReason::Cancelled, stats: ReplyStats::default() };
    for step in steps {
        let event = match step {
            Step::Text(after, text) => {
                tokio::select! {
                    () = tokio::time::sleep(after) => GenEvent::Delta(text),
                    () = cancel.cancelled() => cancelled(),
                }
            }
            Step::Searching(after, tokens) => {
                tokio::select! {
                    () = tokio::time::sleep(after) => GenEvent::Searching { tokens },
                    () = cancel.cancelled() => cancelled(),
                }
            }
            Step::Finish(reason) => GenEvent::Finished { reason, stats: ReplyStats::default() },
            Step::Fail(error) => GenEvent::Failed(error),
            Step::Hang => {
                cancel.cancelled().await;
                cancelled()
            }
        };
        let last = event.is_last();
        if events.send(event).is_err() || last {
            return;
        }
    }
    // A script that ends without an end: the stream closes, as a backend that vanished.
}
