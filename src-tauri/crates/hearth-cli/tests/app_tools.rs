//! A chat turn with tools, on the real model, a real history file and a real MCP server
//! (tests/mcp/hostile.mjs kitchen, written with the official SDK): the reply's call waits for the
//! user's word with its arguments; allowed, it runs and its result is saved after the reply, and
//! the next round reads only that result (the rest is in the KV cache); denied, the model is told;
//! a past reply's calls run again with edited arguments become a new version of its results; a
//! draft read ahead with the tools leaves the send nothing to read;
//! Stop during a slow tool ends the call (the server is told) and the turn; a model that calls
//! without end (a remote stand-in) is stopped at the chat's cap on rounds, which its last reply keeps.

use std::collections::BTreeMap;
use std::path::PathBuf;

use hearth_app::agent::{AgentEvent, Decision};
use hearth_app::{App, AppPaths, DEFAULT_MODEL_FILE};
use hearth_core::{
    HistoryStore, MessageStatus, ModelTarget, ProviderConfig, ProviderKind, Role, SamplingParams, StoredMessage, ToolChoice, ToolRunEnd,
    Turn, TurnEvent,
};
use hearth_mcp::{McpServerConfig, McpTransport};
use hearth_providers::Secret;
use hearth_testkit::fake_provider as fake;
use tokio::sync::mpsc;

fn model_path() -> PathBuf {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    std::fs::canonicalize(path).expect("the test model: run scripts/fetch-model.sh target/test-data")
}

fn kitchen() -> McpServerConfig {
    let servers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/mcp");
    assert!(servers.join("node_modules").is_dir(), "the MCP test servers are missing: run scripts/setup.sh test");
    McpServerConfig {
        name: "kitchen".into(),
        transport: McpTransport::Stdio {
            command: "node".into(),
            args: vec!["hostile.mjs".into(), "kitchen".into()],
            env: BTreeMap::new(),
            cwd: Some(servers.display().to_string()),
        },
        enabled: true,
        disabled_tools: Vec::new(),
    }
}

/// Runs a turn with tools in the background; its events come on the receiver.
fn start_turn(
    app: &std::sync::Arc<App>,
    chat: i64,
    text: &str,
    first: ToolChoice,
) -> (tokio::task::JoinHandle<StoredMessage>, mpsc::UnboundedReceiver<AgentEvent>) {
    let sampling = SamplingParams { seed: Some(7), temperature: 0.0, max_tokens: 64, repeat_penalty: 1.3, ..SamplingParams::default() };
    start_turn_with(app, chat, text, first, sampling)
}

fn start_turn_with(
    app: &std::sync::Arc<App>,
    chat: i64,
    text: &str,
    first: ToolChoice,
    sampling: SamplingParams,
) -> (tokio::task::JoinHandle<StoredMessage>, mpsc::UnboundedReceiver<AgentEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (app, text) = (app.clone(), text.to_owned());
    let turn = tokio::spawn(async move {
        app.turn_with_tools(chat, Turn::send(&text), sampling, first, |e| drop(tx.send(e))).await.expect("the turn runs")
    });
    (turn, rx)
}

/// The next event that is not text: the turn's saved messages and its calls.
async fn next_step(events: &mut mpsc::UnboundedReceiver<AgentEvent>) -> AgentEvent {
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(120), events.recv())
            .await
            .expect("an event in time")
            .expect("the turn goes on");
        if !matches!(event, AgentEvent::Turn(TurnEvent::Delta(_) | TurnEvent::ReplyStarted { .. })) {
            return event;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_with_tools_on_the_real_model() {
    // SAFETY: this binary's one test sets it before any engine starts.
    unsafe { std::env::set_var("HEARTH_ENGINE_HOST", env!("CARGO_BIN_EXE_hearth-cli")) };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("models")).unwrap();
    std::os::unix::fs::symlink(model_path(), data.join("models").join(DEFAULT_MODEL_FILE)).unwrap();
    let app = App::open(AppPaths::under(data)).await.unwrap();
    app.models.load_at_start(&app.paths.models_dir).await;
    app.tools.save(vec![kitchen()]).await.expect("the server is saved");
    let app = std::sync::Arc::new(app);
    let chat = app.store.create_chat().await.unwrap().id;

    // Allowed: the call runs, its result follows the reply, and the next round reads only it.
    let (turn, mut events) = start_turn(&app, chat, "Where is the kettle?", ToolChoice::Named("find_item".into()));
    assert!(matches!(next_step(&mut events).await, AgentEvent::Turn(TurnEvent::UserSaved(m)) if m.role == Role::User));
    let AgentEvent::RoundFinished(caller) = next_step(&mut events).await else { panic!("the reply called") };
    assert_eq!(caller.tool_calls.len(), 1, "{caller:?}");
    let AgentEvent::Approval(pending) = next_step(&mut events).await else { panic!("the call waits for the user") };
    assert_eq!((pending.server.as_str(), pending.tool.as_str(), pending.read_only), ("kitchen", "find_item", true));
    let arguments: serde_json::Value = serde_json::from_str(&pending.arguments).expect("the model's arguments are JSON");
    assert!(arguments["item"].is_string(), "{arguments}");
    // The user edits the arguments before allowing.
    assert!(app.agent.answer(chat, Decision::Allow { arguments: r#"{"item":"kettle"}"#.into() }));
    assert!(matches!(next_step(&mut events).await, AgentEvent::Running { index: 0, .. }));
    let AgentEvent::Turn(TurnEvent::UserSaved(result)) = next_step(&mut events).await else { panic!("the result is saved") };
    assert_eq!(result.role, Role::Tool);
    assert_eq!(result.content, "The kettle is in the left cupboard.");
    let run = result.tool.as_ref().unwrap();
    assert_eq!(
        (run.end, run.is_error, run.arguments.as_str(), run.server.as_deref()),
        (ToolRunEnd::Ran, false, r#"{"item":"kettle"}"#, Some("kitchen"))
    );
    // The model may call again (a later round): each is denied, until it answers in text.
    let denied = deny_the_rest(&app, chat, &mut events).await;
    assert!(denied as u32 <= SamplingParams::default().max_tool_rounds);
    let last = turn.await.unwrap();
    let path = app.store.messages(chat).await.unwrap();
    let roles: Vec<Role> = path.iter().map(|m| m.role).collect();
    assert_eq!(roles[..4], [Role::User, Role::Assistant, Role::Tool, Role::Assistant], "{roles:?}");
    let stats = path[3].stats.as_ref().expect("round two finished");
    let read = stats.prompt_tokens - stats.cached_tokens;
    assert!(read <= 40, "round two read {read} of {} tokens: only the result's turn should be read", stats.prompt_tokens);
    assert_eq!(last.id, path.last().unwrap().id);
    assert_eq!(last.status, MessageStatus::Complete);

    // Run again, the arguments edited once more: asked even about a tool allowed before, with the
    // arguments it last ran with; the new result is a version beside the first, and the model's
    // answer to it reads only the result.
    let (first_result, caller_id) = (path[2].clone(), path[1].id);
    let refused = app.rerun_tool_calls(chat, path[0].id, SamplingParams::default(), |_| {}).await.unwrap_err();
    assert_eq!(refused.to_string(), format!("message {} is not a reply of this chat that called tools", path[0].id));
    let (tx, mut events) = mpsc::unbounded_channel();
    let rerun = {
        let app = app.clone();
        let sampling = SamplingParams { seed: Some(7), temperature: 0.0, max_tokens: 64, repeat_penalty: 1.3, ..SamplingParams::default() };
        tokio::spawn(async move { app.rerun_tool_calls(chat, caller_id, sampling, |e| drop(tx.send(e))).await.expect("the re-run runs") })
    };
    let AgentEvent::RoundFinished(again) = next_step(&mut events).await else { panic!("the calls are run again") };
    assert_eq!(again.id, caller_id);
    let AgentEvent::Approval(pending) = next_step(&mut events).await else { panic!("the call waits for the user") };
    assert_eq!(pending.arguments, r#"{"item":"kettle"}"#, "the arguments it last ran with");
    assert!(app.agent.answer(chat, Decision::Allow { arguments: r#"{"item":"teapot"}"#.into() }));
    assert!(matches!(next_step(&mut events).await, AgentEvent::Running { index: 0, .. }));
    let AgentEvent::Turn(TurnEvent::UserSaved(result)) = next_step(&mut events).await else { panic!("the result is saved") };
    assert_eq!((result.content.as_str(), result.parent_id), ("The teapot is in the left cupboard.", Some(caller_id)));
    deny_the_rest(&app, chat, &mut events).await;
    let last = rerun.await.unwrap();
    let path = app.store.messages(chat).await.unwrap();
    assert_eq!((path[2].id, &path[2].siblings), (result.id, &vec![first_result.id, result.id]), "a new version, on show");
    assert_eq!(path[3].parent_id, Some(result.id));
    let stats = path[3].stats.as_ref().expect("the model answered the new result");
    let read = stats.prompt_tokens - stats.cached_tokens;
    assert!(read <= 40, "the re-run's answer read {read} of {} tokens: only the result should be read", stats.prompt_tokens);
    assert_eq!(last.id, path.last().unwrap().id);

    // Typed ahead with the tools on: the read-ahead's prompt is the send's (tools in it), so the
    // send reads almost none of it again.
    let question = "And the kettle again?";
    app.prefill_draft(chat, question, &[], false, SamplingParams::default()).await.unwrap();
    // Denied: nothing runs, and the model is told so.
    let (turn, mut events) = start_turn(&app, chat, question, ToolChoice::Named("find_item".into()));
    loop {
        match next_step(&mut events).await {
            AgentEvent::RoundFinished(caller) => {
                let stats = caller.stats.as_ref().expect("the reply's stats");
                let read = stats.prompt_tokens - stats.cached_tokens;
                assert!(read <= 2, "the send read {read} of {} tokens after the draft's read-ahead", stats.prompt_tokens);
            }
            AgentEvent::Approval(_) => break,
            _ => {}
        }
    }
    assert!(app.agent.answer(chat, Decision::Deny));
    let AgentEvent::Turn(TurnEvent::UserSaved(result)) = next_step(&mut events).await else { panic!("the refusal is saved") };
    assert_eq!((result.role, result.tool.as_ref().unwrap().end), (Role::Tool, ToolRunEnd::Denied));
    assert_eq!(result.content, "The user declined to run this tool.");
    deny_the_rest(&app, chat, &mut events).await;
    turn.await.unwrap();

    // Stop during a slow tool: the call ends at once (the server is told), and so does the turn.
    let (turn, mut events) = start_turn(&app, chat, "Search the house for my keys, please.", ToolChoice::Named("slow_search".into()));
    let AgentEvent::Approval(pending) = (loop {
        let event = next_step(&mut events).await;
        if matches!(event, AgentEvent::Approval(_)) {
            break event;
        }
    }) else {
        unreachable!()
    };
    assert!(app.agent.answer(chat, Decision::Allow { arguments: pending.arguments }));
    assert!(matches!(next_step(&mut events).await, AgentEvent::Running { .. }));
    let stopped_at = std::time::Instant::now();
    app.agent.stop(chat);
    app.chat.stop(chat);
    let last = tokio::time::timeout(std::time::Duration::from_secs(20), turn).await.expect("Stop ends the turn").unwrap();
    assert!(stopped_at.elapsed() < std::time::Duration::from_secs(20));
    let path = app.store.messages(chat).await.unwrap();
    let stopped = path.last().unwrap();
    assert_eq!((stopped.role, stopped.tool.as_ref().unwrap().end), (Role::Tool, ToolRunEnd::Stopped), "{path:?}");
    assert_eq!(path[path.len() - 2].id, last.id, "no reply read the stopped call");

    rounds_end_at_the_chats_cap(&app).await;
    app.tools.hub().stop_all().await;
    app.engine.shutdown();
}

/// A model that calls a tool every time (the remote stand-in's `tool-looper`) gets the chat's
/// rounds, no more: the reply where they ran out is saved saying so, and its call never runs.
async fn rounds_end_at_the_chats_cap(app: &std::sync::Arc<App>) {
    let (url, _record) = fake::start().await;
    let provider = ProviderConfig { base_url: url, ..ProviderConfig::new("stand-in", "Stand-in", ProviderKind::OpenAiCompatible) };
    app.save_provider(provider).await.unwrap();
    app.keys.set(Secret::Provider("stand-in"), fake::GOOD_KEY).unwrap();
    let chat = app.store.create_chat().await.unwrap().id;
    let target = ModelTarget::Remote { provider: "stand-in".into(), model: "tool-looper".into() };
    app.store.set_chat_target(chat, &target).await.unwrap();

    let sampling = SamplingParams { max_tool_rounds: 2, ..SamplingParams::default() };
    let (turn, mut events) = start_turn_with(app, chat, "Where is the kettle?", ToolChoice::Auto, sampling);
    let (mut allowed, mut limit) = (0, None);
    while let Some(event) = events.recv().await {
        match event {
            AgentEvent::Approval(pending) => {
                allowed += 1;
                assert!(app.agent.answer(chat, Decision::Allow { arguments: pending.arguments }));
            }
            AgentEvent::RoundLimit(reply) => limit = Some(reply),
            _ => {}
        }
    }
    let last = turn.await.unwrap();
    assert_eq!(allowed, 2, "two rounds of calls ran");
    let limit = limit.expect("the turn said its rounds ran out");
    assert_eq!(limit.id, last.id);
    assert_eq!(last.tool_calls.len(), 1, "the last reply called again: {last:?}");
    let saved = app.store.message(last.id).await.unwrap();
    assert_eq!(saved.stats.and_then(|s| s.tool_round_limit), Some(2), "the cap is kept with the reply");
    let roles: Vec<Role> = app.store.messages(chat).await.unwrap().iter().map(|m| m.role).collect();
    let (user, assistant, tool) = (Role::User, Role::Assistant, Role::Tool);
    assert_eq!(roles, [user, assistant, tool, assistant, tool, assistant], "the third call did not run");
}

/// Denies every call the turn asks about until it ends; how many it denied.
async fn deny_the_rest(app: &App, chat: i64, events: &mut mpsc::UnboundedReceiver<AgentEvent>) -> usize {
    let mut denied = 0;
    while let Some(event) = events.recv().await {
        if let AgentEvent::Approval(_) = event {
            denied += 1;
            app.agent.answer(chat, Decision::Deny);
        }
    }
    denied
}
