//! A chat turn with tools: the local model is offered the tools of the user's MCP servers; when
//! its reply calls some, each call waits for the user's word (the tool, its server, its
//! arguments — editable), runs, and its result is saved after the reply; the next round reads
//! only those results (the rest of the prompt is in the KV cache). Rounds are capped (the chat's
//! `maxToolRounds`; the reply where they ran out says so in its stats); Stop ends a
//! running call (the server is told) and the loop. A tool's output never approves a call: only
//! the window's answer does. A past reply's calls can be run again, their arguments edited: the
//! results become a new version beside the earlier ones, and the model answers them.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use hearth_core::{
    Attachment, ChatId, HistoryStore, MessageId, MessageStatus, OfferedTools, ReplyStats, Role, SamplingParams, StoredMessage, ToolChoice,
    ToolResult, ToolRun, ToolRunEnd, ToolSpec, Turn, TurnError, TurnEvent, fit_result,
};
use hearth_mcp::{CallOptions, CallProgress, CancellationToken, McpError, McpHub, McpServerState};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use ts_rs::TS;

use crate::App;

/// Characters of one result the model reads; the rest is cut, in words.
pub const RESULT_BUDGET: usize = 8_000;

/// How the window's turns let the first reply call: the model chooses (`Auto`). The end-to-end
/// tests set `HEARTH_TEST_TOOL_CHOICE=required` so that the tiny test model, which never chooses
/// to call, writes a call (under the tools' grammar) and the approval flow can be driven.
pub fn window_tool_choice() -> ToolChoice {
    match std::env::var("HEARTH_TEST_TOOL_CHOICE").as_deref() {
        Ok("required") => ToolChoice::Required,
        _ => ToolChoice::Auto,
    }
}

/// A call waiting for the user's word.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    /// The reply that wrote the call, and the call's place among its calls.
    #[ts(type = "number")]
    pub reply: MessageId,
    pub index: u32,
    pub server: String,
    pub tool: String,
    /// The tool's description, as its server gives it.
    pub description: String,
    /// The arguments the model wrote (JSON), which the user may edit before allowing.
    pub arguments: String,
    /// The server says the tool changes nothing: a hint, never a permission.
    pub read_only: bool,
}

/// The user's word on a call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
#[serde(tag = "decision", rename_all = "camelCase")]
pub enum Decision {
    /// Run it once, with these arguments (the model's, or as the user edited them).
    Allow {
        arguments: String,
    },
    /// Run it, and every later call of this tool in this session, without asking.
    AlwaysAllow {
        arguments: String,
    },
    Deny,
}

/// A server the user switched on whose tools a turn could not offer, and why in words.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UnavailableServer {
    pub server: String,
    pub why: String,
}

/// What a turn with tools tells its window, beside the turn's own events.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    Turn(TurnEvent),
    /// A reply that called tools is saved (with its calls); its calls come next.
    RoundFinished(Box<StoredMessage>),
    /// The window must answer [`Agent::answer`] for this call.
    Approval(PendingCall),
    /// The call is running (after the user's yes).
    Running {
        reply: MessageId,
        index: u32,
    },
    Progress {
        reply: MessageId,
        index: u32,
        progress: CallProgress,
    },
    /// The turn used its rounds: its last reply called tools that did not run (the reply as
    /// saved, its stats saying so).
    RoundLimit(Box<StoredMessage>),
    /// Servers switched on whose tools are not offered this turn (one asks to sign in, one
    /// failed): told before the reply, so the user knows why the model cannot use them.
    ToolsUnavailable(Vec<UnavailableServer>),
}

/// The tools a turn offers: what the model sees, and where each call goes.
#[derive(Debug, Clone, Default)]
pub struct ToolBox {
    pub specs: Vec<ToolSpec>,
    routes: HashMap<String, Route>,
    /// Servers switched on that could not be offered.
    pub unavailable: Vec<UnavailableServer>,
}

#[derive(Debug, Clone)]
struct Route {
    server: String,
    tool: String,
    description: String,
    read_only: bool,
}

impl ToolBox {
    /// The tools of every server that is on and ready (started now if need be), minus those the
    /// user switched off, and the servers on that are not ready (why, in words). A name two
    /// servers share is offered as `server_tool` for the second.
    pub async fn gather(hub: &McpHub) -> ToolBox {
        hub.start_all().await;
        ToolBox::ready_now(hub)
    }

    /// What [`Self::gather`] would offer of the servers as they are now, none started: a server
    /// still starting is left out (and left to the turn that started it to wait for).
    pub fn ready_now(hub: &McpHub) -> ToolBox {
        let mut toolbox = ToolBox::default();
        for status in hub.statuses() {
            let why = match status.state {
                McpServerState::Ready { tools } => Ok(tools),
                McpServerState::SignIn => Err("it asks to sign in".to_owned()),
                McpServerState::Failed { message, .. } => Err(format!("it failed: {message}")),
                McpServerState::Off | McpServerState::Idle | McpServerState::Starting => continue,
            };
            let tools = match why {
                Ok(tools) => tools,
                Err(why) => {
                    toolbox.unavailable.push(UnavailableServer { server: status.config.name.clone(), why });
                    continue;
                }
            };
            for tool in tools.into_iter().filter(|t| !status.config.disabled_tools.contains(&t.name)) {
                let mut name = tool.name.clone();
                if toolbox.routes.contains_key(&name) {
                    name = format!("{}_{}", status.config.name, tool.name);
                }
                let spec = ToolSpec { name: name.clone(), description: tool.description.clone(), parameters: tool.input_schema.clone() };
                if let Err(e) = spec.check() {
                    tracing::warn!(server = status.config.name, tool = tool.name, "an MCP tool is not offered: {e}");
                    continue;
                }
                toolbox.specs.push(spec);
                let route =
                    Route { server: status.config.name.clone(), tool: tool.name, description: tool.description, read_only: tool.read_only };
                toolbox.routes.insert(name, route);
            }
        }
        toolbox
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    fn offered(&self) -> Option<OfferedTools> {
        (!self.is_empty()).then(|| OfferedTools { tools: self.specs.clone(), choice: ToolChoice::Auto, parallel: true })
    }
}

/// Turns with tools in flight: their approvals and their Stop.
#[derive(Default)]
pub struct Agent {
    waiting: Mutex<HashMap<ChatId, oneshot::Sender<Decision>>>,
    stops: Mutex<HashMap<ChatId, CancellationToken>>,
    /// Tools the user allowed for the session (server, tool).
    always: Mutex<HashSet<(String, String)>>,
}

impl Agent {
    /// The window's word on the call `chat` waits for. False when none waits.
    pub fn answer(&self, chat: ChatId, decision: Decision) -> bool {
        match self.waiting.lock().expect("approvals poisoned").remove(&chat) {
            Some(waiting) => waiting.send(decision).is_ok(),
            None => false,
        }
    }

    /// Stop: the call running (or waiting) in `chat` ends, and its loop with it.
    pub fn stop(&self, chat: ChatId) {
        if let Some(stop) = self.stops.lock().expect("stops poisoned").get(&chat) {
            stop.cancel();
        }
        self.waiting.lock().expect("approvals poisoned").remove(&chat);
    }
}

impl App {
    /// Runs `turn` in `chat`, with the user's tools when any are ready: rounds of calls (each allowed by the user, through `on_event` and
    /// [`Agent::answer`]) until a reply calls none, Stop, or `sampling.max_tool_rounds`. Returns the last reply.
    /// `first` is how the first reply may call (the window: `Auto`); later ones choose.
    pub async fn turn_with_tools(
        &self,
        chat: ChatId,
        turn: Turn<'_>,
        sampling: SamplingParams,
        first: ToolChoice,
        mut on_event: impl FnMut(AgentEvent) + Send,
    ) -> Result<StoredMessage, TurnError> {
        let toolbox = ToolBox::gather(self.tools.hub()).await;
        if !toolbox.unavailable.is_empty() {
            on_event(AgentEvent::ToolsUnavailable(toolbox.unavailable.clone()));
        }
        let stop = CancellationToken::new();
        self.agent.stops.lock().expect("stops poisoned").insert(chat, stop.clone());
        let _unregister = Unregister { agent: &self.agent, chat };

        let offered = toolbox.offered().map(|tools| OfferedTools { choice: first, ..tools });
        let reply = self.chat.run_with_tools(chat, turn, sampling.clone(), offered, |e| on_event(AgentEvent::Turn(e))).await?;
        self.call_rounds(chat, reply, Rounds { toolbox: &toolbox, stop: &stop, sampling, rerun: None }, &mut on_event).await
    }

    /// Reads ahead the message being typed in `chat` (see [`hearth_core::ChatService::prefill`])
    /// with the tools a send would offer: they are in its prompt, so a read-ahead without them
    /// would read a prompt the send does not keep. Only the servers ready now: starting one here
    /// would race the send's own start (which offers only the servers it saw ready).
    pub async fn prefill_draft(
        &self,
        chat: ChatId,
        draft: &str,
        attachments: &[Attachment],
        still_typing: bool,
        sampling: SamplingParams,
    ) -> Result<(), TurnError> {
        let toolbox = ToolBox::ready_now(self.tools.hub());
        self.chat.prefill(chat, draft, attachments, still_typing, sampling, toolbox.offered()).await
    }

    /// Runs the calls of `reply`, a past reply of `chat`, again: each waits for the user's word
    /// with its arguments to edit (a tool allowed for the session too; the arguments it last ran
    /// with on the path shown, else the model's), and the results are
    /// saved after the reply as a new version beside the earlier ones (the chat then shows it);
    /// the model answers them, in rounds as [`Self::turn_with_tools`]. Returns the last reply.
    /// Refused while a turn runs in the chat, for a reply that called nothing, and when no tool
    /// server is ready.
    pub async fn rerun_tool_calls(
        &self,
        chat: ChatId,
        reply: MessageId,
        sampling: SamplingParams,
        mut on_event: impl FnMut(AgentEvent) + Send,
    ) -> Result<StoredMessage, TurnError> {
        let caller = self.store.message(reply).await.map_err(|e| TurnError::Store(Box::new(e)))?;
        if caller.chat_id != chat || caller.tool_calls.is_empty() {
            return Err(TurnError::InvalidInput(format!("message {reply} is not a reply of this chat that called tools")));
        }
        if caller.status == MessageStatus::Streaming || self.agent.stops.lock().expect("stops poisoned").contains_key(&chat) {
            return Err(TurnError::Busy);
        }
        let toolbox = ToolBox::gather(self.tools.hub()).await;
        if toolbox.is_empty() {
            return Err(TurnError::InvalidInput("no tool server is ready: switch one on in Settings → Tools".into()));
        }
        let shown = self.store.messages(chat).await.map_err(|e| TurnError::Store(Box::new(e)))?;
        let results = shown.iter().skip_while(|m| m.id != reply).skip(1).take_while(|m| m.role == Role::Tool);
        let last_arguments = results.filter_map(|m| m.tool.as_ref().map(|run| run.arguments.clone())).collect();
        let stop = CancellationToken::new();
        self.agent.stops.lock().expect("stops poisoned").insert(chat, stop.clone());
        let _unregister = Unregister { agent: &self.agent, chat };
        let caller = StoredMessage { status: MessageStatus::Complete, ..caller };
        let rounds = Rounds { toolbox: &toolbox, stop: &stop, sampling, rerun: Some(last_arguments) };
        self.call_rounds(chat, caller, rounds, &mut on_event).await
    }

    /// The rounds after `reply`: its calls run (each allowed by the user), the model reads their
    /// results, until a reply calls none, Stop, or the chat's cap on rounds.
    async fn call_rounds(
        &self,
        chat: ChatId,
        mut reply: StoredMessage,
        rounds: Rounds<'_>,
        on_event: &mut (impl FnMut(AgentEvent) + Send),
    ) -> Result<StoredMessage, TurnError> {
        let Rounds { toolbox, stop, sampling, mut rerun } = rounds;
        for round in 1u32.. {
            if reply.status != MessageStatus::Complete || reply.tool_calls.is_empty() || toolbox.is_empty() || stop.is_cancelled() {
                return Ok(reply);
            }
            if round > sampling.max_tool_rounds {
                let stats = ReplyStats { tool_round_limit: Some(sampling.max_tool_rounds), ..reply.stats.clone().unwrap_or_default() };
                let reply = self
                    .store
                    .update_reply(reply.id, &reply.content, reply.status, Some(&stats))
                    .await
                    .map_err(|e| TurnError::Store(Box::new(e)))?;
                on_event(AgentEvent::RoundLimit(Box::new(reply.clone())));
                return Ok(reply);
            }
            on_event(AgentEvent::RoundFinished(Box::new(reply.clone())));
            // While the calls run, the engine reads the next round's prompt up to their results;
            // when they come first, the read-ahead is given up for the reply that reads them.
            let last_arguments = rerun.take();
            let results = {
                let calls = self.run_calls(chat, &reply, toolbox, stop, last_arguments.as_deref(), on_event);
                let ahead = self.chat.prefill_results(chat, &reply, sampling.clone(), toolbox.offered());
                tokio::pin!(calls);
                tokio::select! {
                    biased;
                    results = &mut calls => results,
                    _ = ahead => calls.await,
                }
            };
            if stop.is_cancelled() {
                // What ran is kept; no reply reads it now (the next message will).
                let mut last = reply.clone();
                for result in &results {
                    last = self
                        .store
                        .append_tool_result(chat, last.id, &result.content, &result.run)
                        .await
                        .map_err(|e| TurnError::Store(Box::new(e)))?;
                    on_event(AgentEvent::Turn(TurnEvent::UserSaved(Box::new(last.clone()))));
                }
                return Ok(reply);
            }
            let next = Turn::ToolResults { reply: reply.id, results: &results };
            reply = self.chat.run_with_tools(chat, next, sampling.clone(), toolbox.offered(), |e| on_event(AgentEvent::Turn(e))).await?;
        }
        unreachable!("the loop returns")
    }

    /// Each call of `reply`, in order: asked, run (or not), its result fitted to the budget. A
    /// re-run (`rerun`: the arguments each call last ran with) asks even about a tool allowed
    /// for the session, offering those arguments.
    async fn run_calls(
        &self,
        chat: ChatId,
        reply: &StoredMessage,
        toolbox: &ToolBox,
        stop: &CancellationToken,
        rerun: Option<&[String]>,
        on_event: &mut (impl FnMut(AgentEvent) + Send),
    ) -> Vec<ToolResult> {
        let mut results = Vec::new();
        for (index, call) in reply.tool_calls.iter().enumerate() {
            let index = index as u32;
            let record = |server: Option<&str>, arguments: &str, end: ToolRunEnd| ToolRun {
                name: call.name.clone(),
                server: server.map(str::to_owned),
                arguments: arguments.to_owned(),
                end,
                is_error: end != ToolRunEnd::Ran,
                elapsed_ms: 0,
                chars: 0,
                cut: false,
            };
            if stop.is_cancelled() {
                break;
            }
            let Some(route) = toolbox.routes.get(&call.name) else {
                let words = format!("There is no tool named {:?}.", call.name);
                results.push(finish(words, record(None, &call.arguments, ToolRunEnd::Failed)));
                continue;
            };
            let key = (route.server.clone(), route.tool.clone());
            let allowed = rerun.is_none() && self.agent.always.lock().expect("always poisoned").contains(&key);
            let offered = rerun.and_then(|last| last.get(index as usize)).unwrap_or(&call.arguments);
            let arguments = if allowed {
                Some(offered.clone())
            } else {
                let (tx, rx) = oneshot::channel();
                self.agent.waiting.lock().expect("approvals poisoned").insert(chat, tx);
                on_event(AgentEvent::Approval(PendingCall {
                    reply: reply.id,
                    index,
                    server: route.server.clone(),
                    tool: route.tool.clone(),
                    description: route.description.clone(),
                    arguments: offered.clone(),
                    read_only: route.read_only,
                }));
                let decision = tokio::select! {
                    decision = rx => decision.ok(),
                    () = stop.cancelled() => None,
                };
                match decision {
                    Some(Decision::Allow { arguments }) => Some(arguments),
                    Some(Decision::AlwaysAllow { arguments }) => {
                        self.agent.always.lock().expect("always poisoned").insert(key);
                        Some(arguments)
                    }
                    Some(Decision::Deny) => None,
                    None => {
                        let words = "The user stopped before this tool ran.".to_owned();
                        results.push(finish(words, record(Some(&route.server), offered, ToolRunEnd::Stopped)));
                        break;
                    }
                }
            };
            let Some(arguments) = arguments else {
                let words = "The user declined to run this tool.".to_owned();
                results.push(finish(words, record(Some(&route.server), offered, ToolRunEnd::Denied)));
                continue;
            };
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&arguments) else {
                let words = "The arguments are not JSON.".to_owned();
                results.push(finish(words, record(Some(&route.server), &arguments, ToolRunEnd::Failed)));
                continue;
            };
            on_event(AgentEvent::Running { reply: reply.id, index });
            let (progress, mut told) = mpsc::unbounded_channel();
            let options = CallOptions { cancel: stop.child_token(), progress: Some(progress), ..CallOptions::default() };
            let started = std::time::Instant::now();
            let call_future = self.tools.hub().call(&route.server, &route.tool, value, &options);
            tokio::pin!(call_future);
            let outcome = loop {
                tokio::select! {
                    outcome = &mut call_future => break outcome,
                    Some(step) = told.recv() => on_event(AgentEvent::Progress { reply: reply.id, index, progress: step }),
                }
            };
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let result = match outcome {
                Ok(outcome) => {
                    let run =
                        ToolRun { is_error: outcome.is_error, elapsed_ms, ..record(Some(&route.server), &arguments, ToolRunEnd::Ran) };
                    finish(outcome.text, run)
                }
                Err(McpError::Cancelled) => {
                    finish("The user stopped this tool.".into(), record(Some(&route.server), &arguments, ToolRunEnd::Stopped))
                }
                Err(error) => {
                    let run = ToolRun { elapsed_ms, ..record(Some(&route.server), &arguments, ToolRunEnd::Failed) };
                    finish(format!("The tool could not run: {error}."), run)
                }
            };
            results.push(result);
        }
        results
    }
}

/// What the rounds after a reply run with.
struct Rounds<'a> {
    toolbox: &'a ToolBox,
    stop: &'a CancellationToken,
    sampling: SamplingParams,
    /// A re-run: the first round's calls are asked about, even a tool allowed for the session,
    /// offering the arguments each last ran with (by the call's place; the model's past them).
    rerun: Option<Vec<String>>,
}

/// The result as the model reads it: cut to [`RESULT_BUDGET`], its full length recorded.
fn finish(text: String, run: ToolRun) -> ToolResult {
    fit_result(&text, RESULT_BUDGET, run)
}

struct Unregister<'a> {
    agent: &'a Agent,
    chat: ChatId,
}

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        self.agent.stops.lock().expect("stops poisoned").remove(&self.chat);
        self.agent.waiting.lock().expect("approvals poisoned").remove(&self.chat);
    }
}
