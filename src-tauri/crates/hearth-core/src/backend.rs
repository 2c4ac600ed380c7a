use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, mpsc, oneshot};
use ts_rs::TS;

use crate::{ChatId, ChatMessage, LoadParams, ModelTarget, Offload, ProviderError, SamplingParams};

/// Something that writes assistant replies: the local engine or a remote provider.
///
/// `start_reply` returns at once; the reply arrives as [`GenEvent`]s on the returned stream, ending
/// with exactly one `Finished` or `Failed`.
pub trait ChatBackend: Send + Sync + 'static {
    fn start_reply(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError>;

    /// A short generation beside the conversations (a chat's title) that must never delay or
    /// disturb a reply. A backend with a KV cache serves it without evicting the conversation's,
    /// and cancels it as soon as a reply is asked for (it then finishes `Cancelled`).
    fn start_aside(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError> {
        self.start_reply(request)
    }

    /// Reads ahead what the user is still typing: `request` is the conversation with the draft
    /// as its last user message. A backend with a KV cache prefills the part that will not
    /// change, in idle time, giving way to any other request at once; others do nothing. The
    /// returned [`ReadAhead`] ends when it is done (or given up); it need not be awaited.
    fn prefill(&self, request: ReplyRequest) -> ReadAhead {
        let _ = request;
        ReadAhead::ended()
    }

    /// The context length, in tokens, of the model that answers for `target`, where known (the
    /// local engine's loaded model): whether attached documents go in whole depends on it.
    fn context_tokens(&self, target: &ModelTarget) -> Option<u32> {
        let _ = target;
        None
    }
}

pub struct ReplyRequest {
    pub messages: Vec<ChatMessage>,
    pub sampling: SamplingParams,
    pub cancel: CancelFlag,
    /// The last message is unfinished: an assistant reply to write on from (not a new reply), or
    /// in a read-ahead ([`ChatBackend::prefill`]) a user message still being typed.
    pub continue_last: bool,
    /// Which model answers.
    pub target: ModelTarget,
    /// The conversation (chat) this reply belongs to, so the engine keeps each one's KV cache
    /// apart; `None` for one-off prompts.
    pub conversation: Option<ChatId>,
    /// Report each token's log-probability with this many alternatives (`GenEvent::Logprobs`);
    /// `None`: none (the window never asks; the server does when a client does).
    pub logprobs: Option<u32>,
    /// Report each token with the distribution the sampler drew it from and this many of its
    /// likeliest tokens (`GenEvent::TokenProbs`, the window's token inspector); `None`: none.
    pub top_probs: Option<u32>,
    /// Text to continue as it is, without the chat template (`messages` are then ignored): the
    /// server's `/v1/completions`. Local models only.
    pub raw_prompt: Option<String>,
    /// Tools the reply may call (local models: offered in the prompt, a started call kept valid
    /// by a grammar; the caller reads the calls out of the text with `read_calls`).
    pub tools: Option<crate::OfferedTools>,
    /// More for a local model's chat template to read, as llama.cpp's server takes them
    /// (`chat_template_kwargs`, gpt-oss's `reasoning_effort`); what the prompt itself sets
    /// (`messages`, `tools`…) is not among them.
    pub template_kwargs: serde_json::Map<String, serde_json::Value>,
}

impl ReplyRequest {
    pub fn new(messages: Vec<ChatMessage>, sampling: SamplingParams, cancel: CancelFlag) -> Self {
        ReplyRequest {
            messages,
            sampling,
            cancel,
            continue_last: false,
            target: ModelTarget::LOADED,
            conversation: None,
            logprobs: None,
            top_probs: None,
            raw_prompt: None,
            tools: None,
            template_kwargs: serde_json::Map::new(),
        }
    }
}

/// Sends each request to the local engine or the remote providers by its target, so the chat
/// flow does not care which one answers.
pub struct Switch<L, R> {
    pub local: Arc<L>,
    pub remote: Arc<R>,
}

impl<L: ChatBackend, R: ChatBackend> Switch<L, R> {
    pub fn new(local: Arc<L>, remote: Arc<R>) -> Self {
        Switch { local, remote }
    }
}

impl<L: ChatBackend, R: ChatBackend> ChatBackend for Switch<L, R> {
    fn start_reply(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError> {
        match request.target {
            ModelTarget::Local { .. } => self.local.start_reply(request),
            ModelTarget::Remote { .. } => self.remote.start_reply(request),
        }
    }

    fn start_aside(&self, request: ReplyRequest) -> Result<ReplyStream, BackendError> {
        match request.target {
            ModelTarget::Local { .. } => self.local.start_aside(request),
            ModelTarget::Remote { .. } => self.remote.start_aside(request),
        }
    }

    fn prefill(&self, request: ReplyRequest) -> ReadAhead {
        match request.target {
            ModelTarget::Local { .. } => self.local.prefill(request),
            ModelTarget::Remote { .. } => self.remote.prefill(request),
        }
    }

    fn context_tokens(&self, target: &ModelTarget) -> Option<u32> {
        match target {
            ModelTarget::Local { .. } => self.local.context_tokens(target),
            ModelTarget::Remote { .. } => self.remote.context_tokens(target),
        }
    }
}

/// The end of a read-ahead ([`ChatBackend::prefill`]): it comes once the backend has read what
/// it will of the draft, given it up for another request, or found nothing to read.
#[derive(Debug)]
pub struct ReadAhead(Option<oneshot::Receiver<()>>);

impl ReadAhead {
    /// A read-ahead with nothing to do.
    pub fn ended() -> ReadAhead {
        ReadAhead(None)
    }

    /// A read-ahead under way, and what ends it (sent, or dropped).
    pub fn started() -> (oneshot::Sender<()>, ReadAhead) {
        let (end, ended) = oneshot::channel();
        (end, ReadAhead(Some(ended)))
    }

    /// Waits for its end.
    pub async fn finished(self) {
        if let Some(ended) = self.0 {
            let _ = ended.await;
        }
    }

    /// Waits for its end on a thread that is not the async runtime's.
    pub fn wait(self) {
        if let Some(ended) = self.0 {
            let _ = ended.blocking_recv();
        }
    }
}

pub struct ReplyStream {
    /// Display name of the model writing the reply.
    pub model: String,
    pub events: mpsc::UnboundedReceiver<GenEvent>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum GenEvent {
    /// New text; UTF-8 complete (a character split across tokens arrives whole).
    Delta(String),
    /// Only when asked for (`ReplyRequest::logprobs`): the tokens of the next `Delta`, each with
    /// its log-probability and the likeliest alternatives, sent just before it.
    Logprobs(Vec<TokenLogprob>),
    /// Only when asked for (`ReplyRequest::top_probs`): the tokens of the next `Delta`, each
    /// with the distribution it was drawn from, sent just before it.
    TokenProbs(Vec<TokenProbs>),
    /// A reply written whole when its search ends (a beam search, a consensus): how far the
    /// search has got, in tokens each beam or candidate has written, sent as it goes so the
    /// window can say so. A streamed reply never sends it.
    Searching {
        tokens: u32,
    },
    Finished {
        reason: FinishReason,
        stats: ReplyStats,
    },
    Failed(BackendError),
}

impl GenEvent {
    /// Whether it ends the reply: nothing follows a `Finished` or a `Failed`.
    pub fn is_last(&self) -> bool {
        matches!(self, GenEvent::Finished { .. } | GenEvent::Failed(_))
    }
}

/// A generated token as the model scored it: the log-softmax of its raw logits at that position
/// (before any sampler, as OpenAI's `logprobs` are), with the likeliest tokens there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    pub token: TokenChoice,
    /// The likeliest tokens at this position, most likely first (the chosen one among them if it is one).
    pub top: Vec<TokenChoice>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenChoice {
    pub id: i32,
    /// The token's bytes: a piece of a multi-byte character is not text on its own.
    pub bytes: Vec<u8>,
    pub logprob: f32,
}

/// A token of a reply with the distribution it was drawn from: the model's, after the sampler
/// chain (truncation, temperature, penalties, grammar) — what the choice was really among.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenProbs {
    pub id: i32,
    /// Its text (a piece of a multi-byte character shows as U+FFFD).
    pub text: String,
    /// Its probability in that distribution.
    pub p: f32,
    /// The distribution's entropy in bits: 0 when only one token could come.
    pub entropy: f32,
    /// Its likeliest tokens, most likely first.
    pub top: Vec<TokenAlternative>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenAlternative {
    pub id: i32,
    pub text: String,
    pub p: f32,
}

/// The most alternatives a reply's tokens may carry (OpenAI's `top_logprobs` limit).
pub const MAX_TOP_LOGPROBS: u32 = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FinishReason {
    /// The model ended its turn.
    EndOfTurn,
    /// A stop string was reached (and left out of the reply).
    StopString,
    /// `max_tokens` or the context window was reached.
    Length,
    /// The cancel flag was raised.
    Cancelled,
}

/// Saved with each reply as JSON; fields added later default, so older rows still read.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplyStats {
    /// Tokens in the rendered prompt.
    pub prompt_tokens: u32,
    /// Prompt tokens reused from the KV cache instead of being prefilled again.
    pub cached_tokens: u32,
    pub completion_tokens: u32,
    /// Time to first token, milliseconds.
    pub ttft_ms: f64,
    /// Decode speed after the first token, tokens per second.
    pub decode_tps: f64,
    /// Earlier messages left out because the conversation outgrew the context window.
    pub dropped_messages: u32,
    /// The reply stopped at its max-tokens limit or the context's end, not where the model ended
    /// it: "Continue" writes on.
    pub cut_at_limit: bool,
    /// Where the reused part of the prompt came from.
    #[serde(default)]
    pub prompt_source: PromptSource,
    /// Tokens guessed ahead by speculative decoding, and how many of them the sampler kept.
    pub drafted_tokens: u32,
    pub accepted_tokens: u32,
    /// A consensus reply's candidates and their scores (boxed: most replies have none).
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consensus: Option<Box<crate::Consensus>>,
    /// A beam search's best finished replies, best first (the first is the reply).
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beams: Option<Vec<BeamHypothesis>>,
    /// Why the reply was cut off when the engine under it died ("the model crashed: …").
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<String>,
    /// How the prompt was written when the chat template could not be used as it is (a system
    /// prompt it refuses, folded into the first message; llama.cpp's format in its place).
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_notice: Option<String>,
    /// The turn's rounds of tool calls ran out at this reply (the chat's cap, given here): the
    /// calls it wrote did not run.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_round_limit: Option<u32>,
    /// Tokens of the question this reply answers as the model read it: its text with the documents
    /// (whole) or passages written into it, and its images. Counted by a local model; none for a
    /// round of tool results.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question_tokens: Option<u32>,
    /// Of `question_tokens`, each document's, read whole, in the order the question carries them
    /// (none when it has none, or was given passages of them).
    #[ts(optional)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_tokens: Option<Vec<u32>>,
    /// How long the reply reasoned: from its first text to the end of its leading reasoning block
    /// (`hearth_core::split_reasoning`), in milliseconds.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_ms: Option<f64>,
    /// Of `completion_tokens`, those the model reasoned with, where they were counted.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
    /// The provider's signature over the reply's reasoning (Anthropic's thinking block), which
    /// its API asks back with that reasoning within a tool loop.
    #[ts(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_signature: Option<String>,
}

/// One finished reply of a beam search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BeamHypothesis {
    pub text: String,
    /// Sum of its tokens' log-probabilities (the model's own, before any constraint).
    pub logprob: f64,
    /// What it was ranked by: `logprob` ÷ tokens^length penalty.
    pub score: f64,
    pub tokens: u32,
}

/// Where a reply's cached prompt tokens came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum PromptSource {
    /// Nothing of this conversation was cached (a shared opening may still be reused).
    #[default]
    New,
    /// The conversation's cache was in place: it answered last.
    Live,
    /// Brought back from RAM after another chat answered.
    Ram,
    /// Read back from disk (after a restart, or evicted from RAM).
    Disk,
    /// Read while the user was still typing the message.
    Typed,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum BackendError {
    #[error("no model is loaded: pick one in the model list first")]
    NoModel,
    #[error(
        "the conversation is {tokens} tokens long but the model's context holds {n_ctx}; start a new chat, shorten your message or attach less (or give the model a longer context in Settings)"
    )]
    ContextOverflow { tokens: usize, n_ctx: u32 },
    #[error("{0}")]
    InvalidRequest(String),
    #[error("the model could not be used: {0}")]
    Engine(String),
    #[error("the engine stopped unexpectedly; restart Hearth")]
    EngineGone,
    /// Speculative decoding's draft model cannot draft for the model chatting; the reply was
    /// not started.
    #[error("the draft model {path} cannot be used: {reason}. Pick another draft model, or turn speculative decoding off")]
    DraftModel { path: String, reason: String },
    /// The engine process died under the reply; the supervisor starts a new one and reloads
    /// the model, so the next reply works.
    #[error("{cause}. The text so far is kept; the model is loaded again, so Continue or Regenerate works")]
    EngineCrashed { cause: String },
    /// The engine process keeps dying: the next one starts after a wait, and nothing is sent to
    /// it until then (a loop of failing requests cannot spin the machine).
    #[error("{cause}; it starts again in {retry_after_s} s, try again then")]
    EngineRestarting { cause: String, retry_after_s: u64 },
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

/// Raised to stop a reply early: checked by the local engine between tokens, awaited by remote
/// streams (which then drop the connection at once).
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<CancelState>);

#[derive(Debug, Default)]
struct CancelState {
    raised: AtomicBool,
    notify: Notify,
}

impl CancelFlag {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.raised.store(true, Ordering::Relaxed);
        self.0.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.raised.load(Ordering::Relaxed)
    }

    /// Resolves once the flag is raised (at once if it already is).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// A loaded model: its file, the settings it was loaded with and what they resolved to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    pub name: String,
    pub path: String,
    #[ts(type = "number")]
    pub size_bytes: u64,
    /// The settings as asked for (`None` fields = automatic).
    pub load: LoadParams,
    /// The context length in force (the automatic choice resolved).
    pub n_ctx: u32,
    /// The context length the model was trained for.
    pub n_ctx_train: u32,
    /// Threads writing the reply (one token at a time).
    pub n_threads: u32,
    /// Threads reading the prompt.
    pub n_threads_batch: u32,
    /// Memory its KV cache takes: every cell of the context, allocated at load (known once loaded).
    #[ts(optional, type = "number")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_bytes: Option<u64>,
    /// What the user should know about this load, e.g. [`NO_CHAT_TEMPLATE`].
    #[ts(optional)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Its weights were still in memory (kept after another model was loaded): no file was read.
    #[serde(default)]
    pub from_memory: bool,
    /// Where its layers are: the device, and how many of them are on a GPU.
    pub offload: Offload,
    /// The projector it reads images through (its file's path); `None`: text only.
    #[ts(optional)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projector: Option<String>,
    /// The projectors beside the model file (`mmproj-*.gguf` in its folder), which its load
    /// settings offer.
    #[serde(default)]
    pub projectors: Vec<String>,
}

/// Said of a model file that carries no chat template (and no template was chosen for it).
pub const NO_CHAT_TEMPLATE: &str = "no chat template — using ChatML; choose one in the Model settings";
