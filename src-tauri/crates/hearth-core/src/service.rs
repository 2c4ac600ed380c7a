use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

/// How often at most a streaming reply's text is handed to the window: ~10 times a second is all
/// reading needs, and each hand-over costs the web view a script, a layout and a paint (the window
/// paints each at its next frame). A `WindowPace` may space them further.
pub const WINDOW_UPDATE_INTERVAL: Duration = Duration::from_millis(100);

/// How often a streaming reply's text is handed to the window: the app measures what the window
/// costs (`hearth_app::window_pace`); elsewhere `FixedPace`.
pub trait WindowPace: Send + Sync + 'static {
    /// The time between hand-overs now: `WINDOW_UPDATE_INTERVAL` or more.
    fn interval(&self) -> Duration;
    /// A hand-over was made.
    fn handed_over(&self) {}
}

/// Every `WINDOW_UPDATE_INTERVAL`.
pub struct FixedPace;

impl WindowPace for FixedPace {
    fn interval(&self) -> Duration {
        WINDOW_UPDATE_INTERVAL
    }
}

use crate::{
    Attachment, BackendError, CancelFlag, ChatBackend, ChatId, ChatMessage, Embedder, FinishReason, GenEvent, MessageId, MessageStatus,
    OfferedTools, ReasoningClock, ReplyRequest, ReplyStats, ReplyStream, Role, SamplingParams, StoredMessage, TokenProbs, ToolResult,
};

mod conversation;
mod history;
mod plan;

pub use history::HistoryStore;

use conversation::check_attachments;
use plan::Question;

/// The most settings one comparison answers with (the local engine writes four replies at once).
pub const MAX_COMPARED: usize = 4;

/// What a turn does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn<'a> {
    /// A new user message after the path on show, carrying `attachments`, and a reply to it.
    Send { content: &'a str, attachments: &'a [Attachment] },
    /// A new version of user message `message` (its sibling, with the same attachments), and a
    /// reply to it.
    Edit { message: MessageId, content: &'a str },
    /// Another reply beside `reply`, to the same user message.
    Regenerate { reply: MessageId },
    /// Writes on from where the unfinished `reply` ended (stopped, interrupted, failed, or cut
    /// at its length limit).
    Continue { reply: MessageId },
    /// A new version of `reply` (its sibling) that keeps its first `at` tokens, takes
    /// `token` — one of the alternatives the inspector showed at position `at` — and writes on.
    Branch { reply: MessageId, at: usize, token: i32 },
    /// The results of the calls `reply` wrote, saved after it in order, and the reply that reads
    /// them (an agent loop's next round).
    ToolResults { reply: MessageId, results: &'a [ToolResult] },
}

impl<'a> Turn<'a> {
    /// A new user message without files.
    pub fn send(content: &'a str) -> Self {
        Turn::Send { content, attachments: &[] }
    }
}

/// What a caller sees of a turn while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// Boxed: the other events, sent many times a turn, stay small.
    UserSaved(Box<StoredMessage>),
    /// The reply is saved and being written: its id, the model writing it, and the text it
    /// starts from (a continued reply's, a branch's opening; empty for a new reply), which the
    /// deltas go on from.
    ReplyStarted {
        message_id: MessageId,
        model: String,
        text: String,
    },
    Delta(String),
    /// A reply its search writes whole when it ends (a beam search, a consensus): the tokens
    /// each beam or candidate has written so far (at most one such event per pace interval).
    Searching {
        tokens: u32,
    },
}

/// What a caller sees of one variant of a comparison.
#[derive(Debug)]
pub enum ColumnEvent {
    Turn(TurnEvent),
    /// The variant's answer, finished or failed; nothing follows it (boxed, as `UserSaved`).
    Done(Result<Box<StoredMessage>, TurnError>),
}

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("{0}")]
    InvalidInput(String),
    #[error("this chat is already generating a reply; wait for it or press Stop")]
    Busy,
    #[error("could not save the chat: {0}")]
    Store(#[source] Box<dyn StdError + Send + Sync>),
    /// The reply's last save failed, even when tried again (a full disk): the chat keeps it as
    /// last flushed, and it is marked interrupted then or at the next start.
    #[error(
        "the reply could not be saved ({0}). The chat keeps it as last saved, at most half a second behind; free disk space, then use Continue"
    )]
    ReplyNotSaved(#[source] Box<dyn StdError + Send + Sync>),
    /// The backend failed. `reply` is the partial reply as saved, if one had started.
    #[error("{error}")]
    Backend { error: BackendError, reply: Option<Box<StoredMessage>> },
}

/// Runs one chat turn: saves the user's message, streams the reply from the backend, saves the reply
/// as it streams (at least every `flush_every`), and marks it finished.
pub struct ChatService<B, S> {
    backend: Arc<B>,
    store: Arc<S>,
    flush_every: Duration,
    pace: Arc<dyn WindowPace>,
    active: Mutex<HashMap<ChatId, CancelFlag>>,
    /// The embedding model that ranks passages by meaning too, if any.
    embedder: Option<Arc<dyn Embedder>>,
}

impl<B: ChatBackend, S: HistoryStore> ChatService<B, S> {
    pub fn new(backend: Arc<B>, store: Arc<S>) -> Self {
        Self::with_flush_interval(backend, store, Duration::from_millis(500))
    }

    pub fn with_flush_interval(backend: Arc<B>, store: Arc<S>, flush_every: Duration) -> Self {
        ChatService { backend, store, flush_every, pace: Arc::new(FixedPace), active: Mutex::new(HashMap::new()), embedder: None }
    }

    /// Ranks retrieved passages by meaning too, with the embedding model `embedder` says (by
    /// their words alone until set, or while it names none).
    pub fn set_embedder(&mut self, embedder: Arc<dyn Embedder>) {
        self.embedder = Some(embedder);
    }

    /// How often replies' text is handed on (`FixedPace` until set).
    pub fn set_window_pace(&mut self, pace: Arc<dyn WindowPace>) {
        self.pace = pace;
    }

    pub fn store(&self) -> &Arc<S> {
        &self.store
    }

    pub fn backend(&self) -> &Arc<B> {
        &self.backend
    }

    /// Asks every reply being generated to stop (the app is quitting).
    pub fn stop_all(&self) {
        for flag in self.active.lock().expect("active map poisoned").values() {
            flag.cancel();
        }
    }

    /// Asks the reply being generated in `chat` to stop. Returns false if none is running.
    pub fn stop(&self, chat: ChatId) -> bool {
        match self.active.lock().expect("active map poisoned").get(&chat) {
            Some(flag) => {
                flag.cancel();
                true
            }
            None => false,
        }
    }

    /// Sends `content` as the user in `chat` and returns the finished assistant reply.
    pub async fn send(
        &self,
        chat: ChatId,
        content: &str,
        sampling: SamplingParams,
        on_event: impl FnMut(TurnEvent) + Send,
    ) -> Result<StoredMessage, TurnError> {
        self.run(chat, Turn::send(content), sampling, on_event).await
    }

    /// Lets the backend read ahead while the user types `draft` in `chat` (see
    /// [`ChatBackend::prefill`]): the conversation as a send of `draft` with `attachments` would
    /// give it (`still_typing`: keys were still coming, so the draft's last word is not final).
    /// Files attached before a word is typed are read at once. Does nothing while the chat is
    /// generating or when there is neither text nor a file. `tools`: as the send will offer them
    /// (they are in its prompt). Returns once the read-ahead ended (read, or given up for a reply).
    pub async fn prefill(
        &self,
        chat: ChatId,
        draft: &str,
        attachments: &[Attachment],
        still_typing: bool,
        sampling: SamplingParams,
        tools: Option<OfferedTools>,
    ) -> Result<(), TurnError> {
        if (draft.trim().is_empty() && attachments.is_empty()) || self.active.lock().expect("active map poisoned").contains_key(&chat) {
            return Ok(());
        }
        check_attachments(attachments)?;
        let store = &*self.store;
        let boxed = |e: S::Error| TurnError::Store(Box::new(e));
        let history = store.messages(chat).await.map_err(boxed)?;
        let system = store.system_prompt(chat).await.map_err(boxed)?;
        let question = Question { parent: None, content: draft, attachments: attachments.to_vec() };
        let target = store.chat_target(chat).await.map_err(boxed)?;
        let (messages, _) = self.conversation(&system, &history, Some(&question), &target).await?;
        let mut request = ReplyRequest::new(messages, sampling, CancelFlag::new());
        request.tools = tools;
        request.target = target;
        request.conversation = Some(chat);
        request.continue_last = still_typing;
        self.backend.prefill(request).finished().await;
        Ok(())
    }

    /// Lets the backend read ahead while the calls of `reply` (the last of `chat`) run: the
    /// conversation as their results will give it, each empty, so the turn that holds them is
    /// read up to the first result's text now and only the results when they come (the rest is
    /// read again from there). `tools`: as the next round offers them (they are in its prompt).
    /// Returns once the read-ahead ended (read, or given up for a reply).
    pub async fn prefill_results(
        &self,
        chat: ChatId,
        reply: &StoredMessage,
        sampling: SamplingParams,
        tools: Option<OfferedTools>,
    ) -> Result<(), TurnError> {
        if reply.tool_calls.is_empty() || self.active.lock().expect("active map poisoned").contains_key(&chat) {
            return Ok(());
        }
        let store = &*self.store;
        let boxed = |e: S::Error| TurnError::Store(Box::new(e));
        let (history, system, target) = futures_util::try_join!(
            async { store.path_to(reply.id).await.map_err(boxed) },
            async { store.system_prompt(chat).await.map_err(boxed) },
            async { store.chat_target(chat).await.map_err(boxed) },
        )?;
        let (mut messages, _) = self.conversation(&system, &history, None, &target).await?;
        messages.extend(reply.tool_calls.iter().map(|_| ChatMessage::new(Role::Tool, "")));
        let mut request = ReplyRequest::new(messages, sampling, CancelFlag::new());
        request.tools = tools;
        request.target = target;
        request.conversation = Some(chat);
        self.backend.prefill(request).finished().await;
        Ok(())
    }

    /// Runs one turn in `chat` and returns the finished assistant reply. Everything the user
    /// typed is saved before the backend starts; the reply is saved as it streams.
    pub async fn run(
        &self,
        chat: ChatId,
        turn_kind: Turn<'_>,
        sampling: SamplingParams,
        on_event: impl FnMut(TurnEvent) + Send,
    ) -> Result<StoredMessage, TurnError> {
        self.run_with_tools(chat, turn_kind, sampling, None, on_event).await
    }

    /// [`Self::run`], with `tools` the reply may call (its calls are in its text; the caller
    /// runs them and answers with [`Turn::ToolResults`]).
    pub async fn run_with_tools(
        &self,
        chat: ChatId,
        turn_kind: Turn<'_>,
        sampling: SamplingParams,
        tools: Option<OfferedTools>,
        mut on_event: impl FnMut(TurnEvent) + Send,
    ) -> Result<StoredMessage, TurnError> {
        if let Turn::Send { attachments, .. } = turn_kind {
            check_attachments(attachments)?;
        }
        sampling.validate().map_err(|e| TurnError::InvalidInput(e.to_string()))?;
        let turn = ActiveTurn::register(&self.active, chat)?;

        let store = &*self.store;
        let boxed = |e: S::Error| TurnError::Store(Box::new(e));
        // What the request needs, read at once: every millisecond before the engine is asked is
        // one on the time to the first token.
        let (plan, system, target) =
            futures_util::try_join!(self.plan(chat, turn_kind), async { store.system_prompt(chat).await.map_err(boxed) }, async {
                store.chat_target(chat).await.map_err(boxed)
            },)?;
        if let Some(question) = &plan.user
            && question.content.trim().is_empty()
            && question.attachments.is_empty()
        {
            return Err(TurnError::InvalidInput("the message is empty".into()));
        }
        let mut history = plan.history;
        let parent_before = history.last().map(|m| m.id);
        let mut continued = plan.continued;
        let mut tokens = plan.tokens;
        if let Some(branch) = plan.branch {
            let message =
                store.append_message(chat, parent_before, Role::Assistant, &branch.text, MessageStatus::Stopped, branch.model.as_deref());
            continued = Some(message.await.map_err(boxed)?);
            tokens = branch.tokens;
        }
        if let Some(partial) = &continued {
            history.push(partial.clone());
        }
        let (mut messages, passages) = self.conversation(&system, &history, plan.user.as_ref(), &target).await?;
        messages.extend(plan.results.iter().map(|r| ChatMessage::new(Role::Tool, r.content.clone())));
        let mut request = ReplyRequest::new(messages, sampling, turn.flag.clone());
        request.tools = tools;
        request.continue_last = continued.as_ref().is_some_and(|m| !m.content.is_empty());
        request.target = target;
        request.conversation = Some(chat);
        request.top_probs = (request.sampling.top_probs > 0).then_some(request.sampling.top_probs);
        tracing::debug!(chat, "reply asked of the backend");
        let started = self.backend.start_reply(request);
        // The user's message is saved while the engine reads it, and whether or not the backend
        // took the request (nothing the user wrote is lost); before any of the reply is shown.
        let reply_parent = match plan.user {
            Some(question) => {
                let saved = store.append_question(chat, question.parent, question.content, &question.attachments, &passages);
                let user = saved.await.map_err(boxed)?;
                on_event(TurnEvent::UserSaved(Box::new(user.clone())));
                Some(user.id)
            }
            None => {
                let mut parent = parent_before;
                for result in plan.results {
                    let after = parent.expect("tool results follow the reply that called");
                    let saved = store.append_tool_result(chat, after, &result.content, &result.run).await.map_err(boxed)?;
                    on_event(TurnEvent::UserSaved(Box::new(saved.clone())));
                    parent = Some(saved.id);
                }
                parent
            }
        };
        let stream = started.map_err(|error| TurnError::Backend { error, reply: None })?;
        let reply = match continued {
            Some(partial) => store.update_reply(partial.id, &partial.content, MessageStatus::Streaming, None).await.map_err(boxed)?,
            None => store
                .append_message(chat, reply_parent, Role::Assistant, "", MessageStatus::Streaming, Some(&stream.model))
                .await
                .map_err(boxed)?,
        };
        on_event(TurnEvent::ReplyStarted { message_id: reply.id, model: stream.model.clone(), text: reply.content.clone() });
        self.stream_into(reply, stream, tokens, &mut on_event).await
    }

    /// Answers the user message that `reply` answers once per settings in `variants`, side by
    /// side: each answer a new version beside `reply`, all asked at once (a local engine writes
    /// them in one batch), every event tagged with its variant's index and each variant ending
    /// with its own `Done`. The last is on show afterwards; `switch_branch` keeps another.
    /// Fails as a whole only when nothing started.
    pub async fn compare(
        &self,
        chat: ChatId,
        reply: MessageId,
        variants: &[SamplingParams],
        on_event: impl FnMut(usize, ColumnEvent) + Send,
    ) -> Result<(), TurnError> {
        if !(2..=MAX_COMPARED).contains(&variants.len()) {
            return Err(TurnError::InvalidInput(format!("compare 2 to {MAX_COMPARED} settings, not {}", variants.len())));
        }
        for (i, sampling) in variants.iter().enumerate() {
            sampling.validate().map_err(|e| TurnError::InvalidInput(format!("settings {}: {e}", i + 1)))?;
        }
        let turn = ActiveTurn::register(&self.active, chat)?;
        let store = &*self.store;
        let boxed = |e: S::Error| TurnError::Store(Box::new(e));
        let plan = self.plan(chat, Turn::Regenerate { reply }).await?;
        let parent = plan.history.last().map(|m| m.id);
        let target = store.chat_target(chat).await.map_err(boxed)?;
        let (messages, _) = self.conversation(&store.system_prompt(chat).await.map_err(boxed)?, &plan.history, None, &target).await?;
        let on_event = Mutex::new(on_event);
        let on_event = &on_event;
        let mut answers = Vec::new();
        for (i, sampling) in variants.iter().enumerate() {
            let tell = move |event: ColumnEvent| (on_event.lock().expect("compare events poisoned"))(i, event);
            let mut request = ReplyRequest::new(messages.clone(), sampling.clone(), turn.flag.clone());
            request.target = target.clone();
            // The first keeps the chat's cache; the others share its opening's cells.
            request.conversation = (i == 0).then_some(chat);
            request.top_probs = (sampling.top_probs > 0).then_some(sampling.top_probs);
            // One that cannot start is that variant's answer; the others still run.
            let started = match self.backend.start_reply(request) {
                Ok(stream) => store
                    .append_message(chat, parent, Role::Assistant, "", MessageStatus::Streaming, Some(&stream.model))
                    .await
                    .map(|message| (message, stream))
                    .map_err(boxed),
                Err(error) => Err(TurnError::Backend { error, reply: None }),
            };
            answers.push(async move {
                let result = match started {
                    Ok((message, stream)) => {
                        let started =
                            TurnEvent::ReplyStarted { message_id: message.id, model: stream.model.clone(), text: message.content.clone() };
                        tell(ColumnEvent::Turn(started));
                        self.stream_into(message, stream, Vec::new(), &mut |event| tell(ColumnEvent::Turn(event))).await
                    }
                    Err(error) => Err(error),
                };
                tell(ColumnEvent::Done(result.map(Box::new)));
            });
        }
        futures_util::future::join_all(answers).await;
        Ok(())
    }

    /// Streams `stream` into the saved `reply` (its text so far, its `tokens` so far), saving as
    /// it goes, and marks it finished, stopped, interrupted or failed.
    async fn stream_into(
        &self,
        reply: StoredMessage,
        mut stream: ReplyStream,
        mut tokens: Vec<TokenProbs>,
        on_event: &mut (impl FnMut(TurnEvent) + Send),
    ) -> Result<StoredMessage, TurnError> {
        let store = &*self.store;
        let mut text = reply.content.clone();
        let mut reasoning = ReasoningClock::new(&text);
        let mut unsaved = false;
        // Deltas reach the window at the pace's interval (the first at once): a provider may send
        // hundreds of events a second, each an IPC message and a script for the web view, on the
        // cores the model needs.
        let mut unsent = String::new();
        let mut last_sent: Option<Instant> = None;
        let mut last_searching: Option<Instant> = None;
        let mut flush = tokio::time::interval_at(Instant::now() + self.flush_every, self.flush_every);
        flush.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let outcome = loop {
            tokio::select! {
                event = stream.events.recv() => match event {
                    Some(GenEvent::Delta(delta)) => {
                        reasoning.read(&delta);
                        text.push_str(&delta);
                        unsaved = true;
                        unsent.push_str(&delta);
                        if last_sent.is_none_or(|at| at.elapsed() >= self.pace.interval()) {
                            if last_sent.is_none() {
                                tracing::debug!(reply = reply.id, "first text to the window");
                            }
                            on_event(TurnEvent::Delta(std::mem::take(&mut unsent)));
                            self.pace.handed_over();
                            last_sent = Some(Instant::now());
                        }
                    }
                    // The window's chats never ask for log-probabilities.
                    Some(GenEvent::Logprobs(_)) => {}
                    Some(GenEvent::TokenProbs(more)) => tokens.extend(more),
                    Some(GenEvent::Searching { tokens }) => {
                        if last_searching.is_none_or(|at| at.elapsed() >= self.pace.interval()) {
                            on_event(TurnEvent::Searching { tokens });
                            last_searching = Some(Instant::now());
                        }
                    }
                    Some(GenEvent::Finished { reason, stats }) => break Ok((reason, stats)),
                    Some(GenEvent::Failed(error)) => break Err(error),
                    None => break Err(BackendError::EngineGone),
                },
                _ = tokio::time::sleep_until(last_sent.unwrap_or_else(Instant::now) + self.pace.interval()),
                    if !unsent.is_empty() => {
                    on_event(TurnEvent::Delta(std::mem::take(&mut unsent)));
                    self.pace.handed_over();
                    last_sent = Some(Instant::now());
                }
                _ = flush.tick(), if unsaved => {
                    // Only what the caller was given: after a crash the saved reply is never
                    // more than was shown (the rest waits at most one window update).
                    let shown = &text[..text.len() - unsent.len()];
                    // A failed flush is not fatal: the final save below reports the problem.
                    match store.update_reply(reply.id, shown, MessageStatus::Streaming, None).await {
                        Ok(_) => unsaved = !unsent.is_empty(),
                        Err(e) => tracing::warn!(error = %e, "could not flush the streaming reply"),
                    }
                }
            }
        };
        if !unsent.is_empty() {
            on_event(TurnEvent::Delta(unsent));
        }

        if !tokens.is_empty()
            && let Err(e) = store.save_token_probs(reply.id, &tokens).await
        {
            // The reply is saved without them; only the inspector has less to show.
            tracing::warn!(error = %e, "could not keep the reply's token probabilities");
        }
        match outcome {
            Ok((reason, mut stats)) => {
                stats.cut_at_limit = reason == FinishReason::Length;
                stats.reasoning_ms = reasoning.ms();
                let status = match reason {
                    FinishReason::Cancelled => MessageStatus::Stopped,
                    FinishReason::EndOfTurn | FinishReason::StopString | FinishReason::Length => MessageStatus::Complete,
                };
                self.save_final(reply.id, &text, status, Some(&stats)).await
            }
            Err(error) => {
                // A reply the engine died under is interrupted, not failed: its text is kept and
                // Continue writes on once the supervisor has the model back.
                let (status, stats) = match &error {
                    BackendError::EngineCrashed { cause } => {
                        (MessageStatus::Interrupted, Some(ReplyStats { interrupted_by: Some(cause.clone()), ..ReplyStats::default() }))
                    }
                    _ => (MessageStatus::Failed, None),
                };
                let saved = self.save_final(reply.id, &text, status, stats.as_ref()).await;
                let reply = saved.map_err(|e| tracing::error!(error = %e, "could not save failed reply"));
                Err(TurnError::Backend { error, reply: reply.ok().map(Box::new) })
            }
        }
    }
}

/// Waits before the reply's last save is tried again: a locked or full disk may come back.
const FINAL_SAVE_RETRIES: [Duration; 3] = [Duration::from_millis(100), Duration::from_millis(400), Duration::from_millis(1500)];

impl<B: ChatBackend, S: HistoryStore> ChatService<B, S> {
    /// The reply's last save, tried again a few times. If it never succeeds it is marked
    /// interrupted with the cause, as last flushed (a smaller write, which may still pass);
    /// failing that it stays as last flushed and the next start marks it interrupted.
    async fn save_final(
        &self,
        id: MessageId,
        text: &str,
        status: MessageStatus,
        stats: Option<&ReplyStats>,
    ) -> Result<StoredMessage, TurnError> {
        let store = &*self.store;
        let mut waits = FINAL_SAVE_RETRIES.iter();
        let error = loop {
            match store.update_reply(id, text, status, stats).await {
                Ok(saved) => return Ok(saved),
                Err(e) => match waits.next() {
                    Some(wait) => {
                        tracing::warn!(error = %e, reply = id, "the reply's last save failed; trying again");
                        tokio::time::sleep(*wait).await;
                    }
                    None => break e,
                },
            }
        };
        tracing::error!(error = %error, reply = id, "the reply could not be saved");
        if let Ok(flushed) = store.message(id).await {
            let cause = format!("it could not be saved in full: {error}");
            let stats = ReplyStats { interrupted_by: Some(cause), ..stats.cloned().unwrap_or_default() };
            let _ = store.update_reply(id, &flushed.content, MessageStatus::Interrupted, Some(&stats)).await;
        }
        Err(TurnError::ReplyNotSaved(Box::new(error)))
    }
}

/// Marks a chat as generating for as long as it lives; dropping it (turn over, or the caller gave
/// up on the future) cancels the backend and frees the chat.
struct ActiveTurn<'a> {
    active: &'a Mutex<HashMap<ChatId, CancelFlag>>,
    chat: ChatId,
    flag: CancelFlag,
}

impl<'a> ActiveTurn<'a> {
    fn register(active: &'a Mutex<HashMap<ChatId, CancelFlag>>, chat: ChatId) -> Result<Self, TurnError> {
        let mut map = active.lock().expect("active map poisoned");
        if map.contains_key(&chat) {
            return Err(TurnError::Busy);
        }
        let flag = CancelFlag::new();
        map.insert(chat, flag.clone());
        Ok(ActiveTurn { active, chat, flag })
    }
}

impl Drop for ActiveTurn<'_> {
    fn drop(&mut self) {
        self.flag.cancel();
        self.active.lock().expect("active map poisoned").remove(&self.chat);
    }
}
