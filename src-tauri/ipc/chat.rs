use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_dialog::DialogExt;
use tokio::sync::oneshot;
use ts_rs::TS;

use hearth_attach::Limits;
use hearth_core::{
    Attachment, AttachmentLimits, ChatId, ChatSummary, ColumnEvent, HistoryStore, MessageId, SamplingParams, SearchHit, StoredMessage,
    TokenProbs, Turn, TurnError, TurnEvent,
};

use hearth_app::ModelLoading;
use hearth_app::agent::{AgentEvent, Decision, PendingCall, UnavailableServer};
use hearth_app::attachments::{AttachProgress, OnProgress};
use hearth_mcp::CallProgress;

use crate::AppState;
use crate::ipc::contract::command;
use crate::ipc::{IpcError, IpcErrorKind};

/// The stream of one `send_message` call, in order: `modelLoading`* (only when the chat's model
/// had to be loaded first), `userSaved`, `replyStarted`, `delta`* (`searching`* before a beam
/// search's or consensus's reply, which comes whole), then `finished` or `failed`.
/// With tools, a reply that calls some ends with `roundFinished` instead; then, for each call,
/// `toolApproval` (answered with `answer_tool_call`), `toolRunning`, `toolProgress`*; the results
/// come as `userSaved` (role `tool`), and the next reply as above. `roundLimit` before `finished`
/// says the turn used its rounds.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "event", content = "data", rename_all = "camelCase")]
pub enum ChatEvent {
    ModelLoading(ModelLoading),
    UserSaved(MessageSaved),
    ReplyStarted(ReplyStarted),
    Delta(TextDelta),
    Searching(SearchProgress),
    Finished(MessageSaved),
    Failed(FailedReply),
    RoundFinished(MessageSaved),
    ToolApproval(PendingCall),
    ToolRunning(ToolCallRef),
    ToolProgress(ToolProgress),
    /// The turn's rounds ran out: the reply as saved, `stats.toolRoundLimit` set.
    RoundLimit(MessageSaved),
    /// Servers switched on whose tools this turn does not offer, and why (before its reply).
    ToolsUnavailable(ToolsUnavailable),
}

/// Servers whose tools a turn does not offer.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ToolsUnavailable {
    pub servers: Vec<UnavailableServer>,
}

/// Which call of which reply.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRef {
    #[ts(type = "number")]
    pub reply: MessageId,
    pub index: u32,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolProgress {
    #[ts(type = "number")]
    pub reply: MessageId,
    pub index: u32,
    pub progress: CallProgress,
}

impl From<AgentEvent> for ChatEvent {
    fn from(event: AgentEvent) -> Self {
        match event {
            AgentEvent::Turn(event) => event.into(),
            AgentEvent::RoundFinished(message) => ChatEvent::RoundFinished(MessageSaved { message: *message }),
            AgentEvent::Approval(call) => ChatEvent::ToolApproval(call),
            AgentEvent::Running { reply, index } => ChatEvent::ToolRunning(ToolCallRef { reply, index }),
            AgentEvent::Progress { reply, index, progress } => ChatEvent::ToolProgress(ToolProgress { reply, index, progress }),
            AgentEvent::RoundLimit(message) => ChatEvent::RoundLimit(MessageSaved { message: *message }),
            AgentEvent::ToolsUnavailable(servers) => ChatEvent::ToolsUnavailable(ToolsUnavailable { servers }),
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct MessageSaved {
    pub message: StoredMessage,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReplyStarted {
    #[ts(type = "number")]
    pub message_id: MessageId,
    pub model: String,
    /// The text the reply starts from (a continued reply's, a branch's opening; empty for a new
    /// reply): the deltas go on from it.
    pub text: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct TextDelta {
    pub text: String,
}

/// How far a search that writes its reply whole (a beam search, a consensus) has got.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SearchProgress {
    /// Tokens each beam or candidate has written so far.
    pub tokens: u32,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct FailedReply {
    pub error: IpcError,
    /// The partial reply as saved, if one had started.
    pub message: Option<StoredMessage>,
}

/// One event of a comparison's answer: `column` is its variant's index. Each column ends with
/// its own `finished` or `failed`.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CompareEvent {
    pub column: u32,
    pub event: ChatEvent,
}

impl From<TurnEvent> for ChatEvent {
    fn from(event: TurnEvent) -> Self {
        match event {
            TurnEvent::UserSaved(message) => ChatEvent::UserSaved(MessageSaved { message: *message }),
            TurnEvent::ReplyStarted { message_id, model, text } => ChatEvent::ReplyStarted(ReplyStarted { message_id, model, text }),
            TurnEvent::Delta(text) => ChatEvent::Delta(TextDelta { text }),
            TurnEvent::Searching { tokens } => ChatEvent::Searching(SearchProgress { tokens }),
        }
    }
}

command! {
    pub async fn list_chats(state: State<'_, AppState>) -> Result<Vec<ChatSummary>, IpcError> {
        Ok(state.store.list_chats().await?)
    }
}

command! {
    pub async fn create_chat(state: State<'_, AppState>) -> Result<ChatSummary, IpcError> {
        Ok(state.store.create_chat().await?)
    }
}

command! {
    pub async fn list_messages(chat_id: ChatId, state: State<'_, AppState>) -> Result<Vec<StoredMessage>, IpcError> {
        Ok(state.store.messages(chat_id).await?)
    }
}

command! {
    /// Sends a user message and streams the reply over `on_event`. Resolves once the reply has
    /// finished or failed; rejects only if nothing could be started (e.g. an empty message).
    pub async fn send_message<R: Runtime>(
        app: AppHandle<R>,
        chat_id: ChatId,
        content: String,
        attachments: Vec<Attachment>,
        on_event: Channel<ChatEvent>,
        state: State<'_, AppState>,
    ) -> Result<(), IpcError> {
        run_turn(&app, &state, chat_id, Turn::Send { content: &content, attachments: &attachments }, &on_event).await
    }
}

command! {
    /// Reads the file at `path` for the message being written and stores its content; what
    /// `send_message` is given to carry it. A long document tells over `on_progress` how much of
    /// it is indexed. Refused in words: not text, too large, encrypted, ….
    pub async fn attach_file(path: String, on_progress: Channel<AttachProgress>, state: State<'_, AppState>) -> Result<Attachment, IpcError> {
        let limits = Limits::from(state.settings.attachment_limits().await?);
        Ok(hearth_app::attachments::attach_file(&state.store, &state.embedding, path.into(), limits, told(on_progress)).await?)
    }
}

command! {
    /// Reads a pasted file — its `name` and its bytes in base64 (`data`) — for the message being
    /// written and stores its content, as `attach_file` does for a file on disk.
    pub async fn attach_bytes(
        name: String,
        data: String,
        on_progress: Channel<AttachProgress>,
        state: State<'_, AppState>,
    ) -> Result<Attachment, IpcError> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.as_bytes())
            .map_err(|e| IpcError::new(IpcErrorKind::File, format!("{name} was not sent whole ({e}); paste it again")))?;
        let limits = Limits::from(state.settings.attachment_limits().await?);
        Ok(hearth_app::attachments::attach_bytes(&state.store, &state.embedding, (name, bytes), limits, told(on_progress)).await?)
    }
}

command! {
    /// The bytes, in base64, of the image attached under `hash`, for the window to draw a sent
    /// message's thumbnail; `null` for an image too large to draw one from (its chip keeps the
    /// icon). A document's hash, or one nothing is stored under, is refused in words.
    pub async fn get_attached_image(hash: String, state: State<'_, AppState>) -> Result<Option<String>, IpcError> {
        use base64::Engine as _;
        let bytes = hearth_app::attachments::image_preview(&state.store, &hash).await?;
        Ok(bytes.map(|bytes| base64::engine::general_purpose::STANDARD.encode(bytes)))
    }
}

/// A file's progress, told over its command's channel (a closed window's is dropped).
fn told(channel: Channel<AttachProgress>) -> OnProgress {
    Box::new(move |progress| {
        let _ = channel.send(progress);
    })
}

command! {
    /// The limits on attached files (Settings → Attachments).
    pub async fn get_attachment_limits(state: State<'_, AppState>) -> Result<AttachmentLimits, IpcError> {
        Ok(state.settings.attachment_limits().await?)
    }
}

command! {
    /// Saves the limits on attached files; the next file attached is read within them. Out of
    /// range values are refused with the field and its range.
    pub async fn set_attachment_limits(limits: AttachmentLimits, state: State<'_, AppState>) -> Result<AttachmentLimits, IpcError> {
        state.settings.set_attachment_limits(&limits).await?;
        Ok(limits)
    }
}

command! {
    /// The embedding model that ranks retrieved passages by meaning too (Settings →
    /// Attachments); none: by their words alone.
    pub async fn get_embedding_model(state: State<'_, AppState>) -> Result<Option<String>, IpcError> {
        Ok(state.embedding.path())
    }
}

command! {
    /// Chooses the embedding model at `path` (`null`: none) once the engine has embedded a word
    /// with it; a file that is no embedding model, or that llama.cpp refuses, is refused in words.
    pub async fn set_embedding_model(path: Option<String>, state: State<'_, AppState>) -> Result<Option<String>, IpcError> {
        Ok(state.embedding.choose(path.as_deref()).await?)
    }
}

command! {
    /// Asks for files to attach in the system's open dialog; their paths, none when cancelled.
    pub async fn pick_attachments<R: Runtime>(app: AppHandle<R>) -> Result<Vec<String>, IpcError> {
        let (tx, rx) = oneshot::channel();
        app.dialog().file().set_title("Attach files").pick_files(move |paths| {
            let _ = tx.send(paths.unwrap_or_default().into_iter().filter_map(|p| p.into_path().ok()).collect::<Vec<_>>());
        });
        Ok(rx.await.unwrap_or_default().into_iter().map(|p| p.display().to_string()).collect())
    }
}

command! {
    /// Saves a new version of user message `message_id` beside it and streams a reply to it.
    pub async fn edit_message<R: Runtime>(
        app: AppHandle<R>,
        chat_id: ChatId,
        message_id: MessageId,
        content: String,
        on_event: Channel<ChatEvent>,
        state: State<'_, AppState>,
    ) -> Result<(), IpcError> {
        run_turn(&app, &state, chat_id, Turn::Edit { message: message_id, content: &content }, &on_event).await
    }
}

command! {
    /// Streams another reply beside `message_id`, to the same user message.
    pub async fn regenerate_reply<R: Runtime>(
        app: AppHandle<R>,
        chat_id: ChatId,
        message_id: MessageId,
        on_event: Channel<ChatEvent>,
        state: State<'_, AppState>,
    ) -> Result<(), IpcError> {
        run_turn(&app, &state, chat_id, Turn::Regenerate { reply: message_id }, &on_event).await
    }
}

command! {
    /// Writes on from where the unfinished reply `message_id` ended.
    pub async fn continue_reply<R: Runtime>(
        app: AppHandle<R>,
        chat_id: ChatId,
        message_id: MessageId,
        on_event: Channel<ChatEvent>,
        state: State<'_, AppState>,
    ) -> Result<(), IpcError> {
        run_turn(&app, &state, chat_id, Turn::Continue { reply: message_id }, &on_event).await
    }
}

command! {
    /// A new version of reply `message_id` that keeps its first `at` tokens, takes `token` (one
    /// of the alternatives kept at position `at`) and writes on; streamed like a send.
    pub async fn branch_reply<R: Runtime>(
        app: AppHandle<R>,
        chat_id: ChatId,
        message_id: MessageId,
        at: u32,
        token: i32,
        on_event: Channel<ChatEvent>,
        state: State<'_, AppState>,
    ) -> Result<(), IpcError> {
        run_turn(&app, &state, chat_id, Turn::Branch { reply: message_id, at: at as usize, token }, &on_event).await
    }
}

command! {
    /// Runs the tool calls of reply `message_id` again: each waits for the user's word
    /// (`toolApproval`, its arguments to edit), and the results are a new version after the reply,
    /// which the model then answers; streamed like a send.
    pub async fn rerun_tool_calls<R: Runtime>(
        app: AppHandle<R>,
        chat_id: ChatId,
        message_id: MessageId,
        on_event: Channel<ChatEvent>,
        state: State<'_, AppState>,
    ) -> Result<(), IpcError> {
        run_agent(&app, &state, chat_id, Start::Rerun(message_id), &on_event).await
    }
}

command! {
    /// Reply `message_id`'s tokens, each with the distribution it was drawn from (empty when
    /// none were kept: a remote reply, one written before, or with the inspector off).
    pub async fn token_probs(message_id: MessageId, state: State<'_, AppState>) -> Result<Vec<TokenProbs>, IpcError> {
        Ok(state.store.token_probs(message_id).await?)
    }
}

command! {
    /// Answers the user message of reply `message_id` once per settings in `variants` (2 to 4),
    /// side by side: each answer a new version beside it, streamed over `on_event` tagged with
    /// its column. Resolves when all have ended; `switch_branch` keeps the one the user picks.
    pub async fn compare_replies(
        chat_id: ChatId,
        message_id: MessageId,
        variants: Vec<SamplingParams>,
        on_event: Channel<CompareEvent>,
        state: State<'_, AppState>,
    ) -> Result<(), IpcError> {
        // The window readied the chat's model before it asked (showing the load's progress).
        state.prepare_chat_model(chat_id, |_| {}).await.map_err(|e| IpcError::from(e).concerning("model"))?;
        let emit = |column: usize, event: ChatEvent| {
            if let Err(e) = on_event.send(CompareEvent { column: column as u32, event }) {
                tracing::warn!(error = %e, "the window stopped listening to a comparison");
            }
        };
        let outcome = state.chat.compare(chat_id, message_id, &variants, |column, event| match event {
            ColumnEvent::Turn(event) => emit(column, event.into()),
            ColumnEvent::Done(Ok(message)) => emit(column, ChatEvent::Finished(MessageSaved { message: *message })),
            ColumnEvent::Done(Err(TurnError::Backend { error, reply })) => {
                emit(column, ChatEvent::Failed(FailedReply { error: error.into(), message: reply.map(|r| *r) }))
            }
            ColumnEvent::Done(Err(other)) => emit(column, ChatEvent::Failed(FailedReply { error: other.into(), message: None })),
        });
        Ok(outcome.await?)
    }
}

async fn run_turn<R: Runtime>(
    app: &AppHandle<R>,
    state: &AppState,
    chat_id: ChatId,
    turn: Turn<'_>,
    on_event: &Channel<ChatEvent>,
) -> Result<(), IpcError> {
    run_agent(app, state, chat_id, Start::Turn(turn), on_event).await
}

/// How a turn with tools starts: a reply to write, or a past reply's calls to run again.
enum Start<'a> {
    Turn(Turn<'a>),
    Rerun(MessageId),
}

async fn run_agent<R: Runtime>(
    app: &AppHandle<R>,
    state: &AppState,
    chat_id: ChatId,
    start: Start<'_>,
    on_event: &Channel<ChatEvent>,
) -> Result<(), IpcError> {
    // Stamps for following a turn's first token from Enter to the page (RUST_LOG=…=debug).
    tracing::debug!(chat_id, "turn asked");
    let emit = |event: ChatEvent| {
        if let Err(e) = on_event.send(event) {
            tracing::warn!(error = %e, "the window stopped listening to a reply");
        }
    };
    let loading = on_event.clone();
    let progress = move |load: ModelLoading| {
        let _ = loading.send(ChatEvent::ModelLoading(load));
    };
    state.prepare_chat_model(chat_id, progress).await.map_err(|e| IpcError::from(e).concerning("model"))?;
    let sampling = state.chat_sampling(chat_id).await?;
    let outcome = match start {
        Start::Turn(turn) => {
            state.turn_with_tools(chat_id, turn, sampling, hearth_app::agent::window_tool_choice(), |e| emit(e.into())).await
        }
        Start::Rerun(reply) => state.rerun_tool_calls(chat_id, reply, sampling, |e| emit(e.into())).await,
    };
    match outcome {
        Ok(message) => {
            emit(ChatEvent::Finished(MessageSaved { message }));
            // After the reply, never before it: the title waits its turn on the engine.
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                app.state::<AppState>().title_chat(chat_id).await;
            });
        }
        Err(TurnError::Backend { error, reply }) => {
            emit(ChatEvent::Failed(FailedReply { error: error.into(), message: reply.map(|r| *r) }))
        }
        Err(other) => return Err(other.into()),
    }
    Ok(())
}

command! {
    /// Shows the branch through `message_id` (one of a message's versions); returns the new path.
    pub async fn switch_branch(chat_id: ChatId, message_id: MessageId, state: State<'_, AppState>) -> Result<Vec<StoredMessage>, IpcError> {
        Ok(state.store.switch_branch(chat_id, message_id).await?)
    }
}

command! {
    /// Deletes a message and everything after it in its branch; returns the path now shown.
    pub async fn delete_message(chat_id: ChatId, message_id: MessageId, state: State<'_, AppState>) -> Result<Vec<StoredMessage>, IpcError> {
        Ok(state.store.delete_message(chat_id, message_id).await?)
    }
}

command! {
    pub async fn rename_chat(chat_id: ChatId, title: String, state: State<'_, AppState>) -> Result<ChatSummary, IpcError> {
        Ok(state.store.rename_chat(chat_id, &title).await?)
    }
}

command! {
    pub async fn pin_chat(chat_id: ChatId, pinned: bool, state: State<'_, AppState>) -> Result<ChatSummary, IpcError> {
        Ok(state.store.set_pinned(chat_id, pinned).await?)
    }
}

command! {
    pub async fn set_system_prompt(chat_id: ChatId, prompt: String, state: State<'_, AppState>) -> Result<ChatSummary, IpcError> {
        Ok(state.store.set_system_prompt(chat_id, &prompt).await?)
    }
}

command! {
    pub async fn delete_chat(chat_id: ChatId, state: State<'_, AppState>) -> Result<(), IpcError> {
        state.chat.stop(chat_id);
        state.store.delete_chat(chat_id).await?;
        // Its KV cache goes too, in RAM and on disk.
        state.engine.forget(chat_id);
        Ok(())
    }
}

command! {
    /// Messages matching `query` in every chat, best first. Any text is a valid query.
    pub async fn search_messages(query: String, state: State<'_, AppState>) -> Result<Vec<SearchHit>, IpcError> {
        Ok(state.store.search(&query, SEARCH_LIMIT).await?)
    }
}

/// Search results shown at most.
const SEARCH_LIMIT: u32 = 50;

command! {
    /// Registers the window for chats changed in the background (e.g. titled by the model).
    pub fn watch_chats(on_update: Channel<ChatSummary>, state: State<'_, AppState>) {
        state.watchers.add(on_update);
    }
}

command! {
    /// Reads ahead the message being typed in `chat_id`, with the files `attachments` it will
    /// carry: the model prefills what will not change of it in idle time, so a reply after
    /// Enter starts sooner (`still_typing`: sent while keys still come, so its last word is
    /// left for later). A reply or a load takes over at once; a remote chat ignores it. Answers
    /// once the read-ahead ended (the window need not wait for it).
    pub async fn prefill_draft(
        chat_id: ChatId,
        draft: String,
        attachments: Vec<Attachment>,
        still_typing: bool,
        state: State<'_, AppState>,
    ) -> Result<(), IpcError> {
        let sampling = state.chat_sampling(chat_id).await?;
        Ok(state.prefill_draft(chat_id, &draft, &attachments, still_typing, sampling).await?)
    }
}

command! {
    /// Stops the reply being written in the chat, or the tool running (or waiting to be allowed).
    pub fn stop_generation(chat_id: ChatId, state: State<'_, AppState>) {
        state.agent.stop(chat_id);
        state.chat.stop(chat_id);
    }
}

command! {
    /// The user's word on the tool call the chat waits for (`toolApproval`). Fails when none waits.
    pub fn answer_tool_call(chat_id: ChatId, decision: Decision, state: State<'_, AppState>) -> Result<(), IpcError> {
        if state.agent.answer(chat_id, decision) {
            Ok(())
        } else {
            Err(IpcError::new(crate::ipc::IpcErrorKind::NotFound, "this chat is not waiting for an answer about a tool"))
        }
    }
}
