//! Hearth's MCP client against real servers: the reference `server-everything` from npm over
//! stdio and Streamable HTTP, and hostile servers written with the official SDK
//! (tests/mcp/hostile.mjs) that crash, hang, never answer or print garbage. `scripts/setup.sh
//! test` installs them (tests/mcp/package.json).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use hearth_mcp::{CallOptions, CancellationToken, McpError, McpHub, McpServerConfig, McpServerState, McpTransport, Timeouts};
use serde_json::json;
use tokio::sync::mpsc;

fn servers_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/mcp");
    assert!(dir.join("node_modules").is_dir(), "the MCP test servers are missing: run scripts/setup.sh test (npm ci --prefix tests/mcp)");
    dir
}

fn everything_js() -> String {
    servers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js").display().to_string()
}

fn stdio(name: &str, args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        name: name.into(),
        transport: McpTransport::Stdio {
            command: "node".into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeMap::new(),
            cwd: Some(servers_dir().display().to_string()),
        },
        enabled: true,
        disabled_tools: Vec::new(),
    }
}

fn hostile(name: &str, mode: &str) -> McpServerConfig {
    stdio(name, &["hostile.mjs", mode])
}

fn timeouts(start: Duration) -> Timeouts {
    Timeouts { start, ..Timeouts::default() }
}

fn text_of(outcome: Result<hearth_mcp::ToolOutcome, McpError>) -> String {
    outcome.expect("the call succeeds").text
}

/// The reference server over stdio: its tools listed, a call, progress as the tool reports it,
/// and a call stopped midway (the server told; the session goes on).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_server_over_stdio() {
    let hub = McpHub::new(vec![stdio("everything", &[&everything_js(), "stdio"])], Timeouts::default());
    assert_eq!(hub.statuses()[0].state, McpServerState::Idle, "started only when needed");
    let tools = hub.tools("everything").await.expect("it starts");
    for name in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(tools.iter().any(|t| t.name == name), "{name} among {:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>());
    }
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.input_schema["type"], "object");
    assert!(matches!(hub.statuses()[0].state, McpServerState::Ready { ref tools } if !tools.is_empty()));

    let options = CallOptions::default();
    assert_eq!(text_of(hub.call("everything", "echo", json!({"message": "hello"}), &options).await), "Echo: hello");
    assert!(text_of(hub.call("everything", "get-sum", json!({"a": 2, "b": 40}), &options).await).contains("42"));

    let (progress, mut told) = mpsc::unbounded_channel();
    let options = CallOptions { progress: Some(progress), ..CallOptions::default() };
    let done = hub.call("everything", "trigger-long-running-operation", json!({"duration": 0.4, "steps": 4}), &options).await;
    assert!(text_of(done).contains("completed"));
    let mut steps = Vec::new();
    while let Ok(step) = told.try_recv() {
        steps.push(step.progress);
    }
    // The last step's notice may land after the answer, which ends the call's route.
    assert!(steps.len() >= 3 && steps[..] == [1.0, 2.0, 3.0, 4.0][..steps.len()], "{steps:?}");

    let (progress, mut told) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let options = CallOptions { progress: Some(progress), cancel: cancel.clone(), ..CallOptions::default() };
    let stopper = tokio::spawn(async move {
        told.recv().await.expect("a first step");
        cancel.cancel();
    });
    let started = Instant::now();
    let stopped = hub.call("everything", "trigger-long-running-operation", json!({"duration": 20, "steps": 40}), &options).await;
    assert_eq!(stopped, Err(McpError::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(10), "stopped, not waited out: {:?}", started.elapsed());
    stopper.await.unwrap();
    assert_eq!(
        text_of(hub.call("everything", "echo", json!({"message": "still here"}), &CallOptions::default()).await),
        "Echo: still here"
    );

    // Refusals in words: a tool it lacks, arguments that are not an object, arguments the
    // tool's schema refuses.
    let missing = hub.call("everything", "no-such-tool", json!({}), &CallOptions::default()).await;
    assert_eq!(missing, Err(McpError::UnknownTool { server: "everything".into(), tool: "no-such-tool".into() }));
    let not_object = hub.call("everything", "echo", json!("hello"), &CallOptions::default()).await;
    assert!(matches!(not_object, Err(McpError::Arguments(_))), "{not_object:?}");
    let refused = hub.call("everything", "get-sum", json!({"a": "two"}), &CallOptions::default()).await;
    match refused {
        Ok(outcome) => assert!(outcome.is_error, "a bad argument is an error result: {outcome:?}"),
        Err(error) => assert!(matches!(error, McpError::Refused(_)), "{error}"),
    }

    hub.stop_all().await;
    assert_eq!(hub.statuses()[0].state, McpServerState::Idle);
}

/// The reference server over Streamable HTTP, on loopback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_server_over_streamable_http() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = tokio::process::Command::new("node")
        .args([&everything_js(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < deadline, "server-everything did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let config = McpServerConfig {
        name: "everything-http".into(),
        transport: McpTransport::Http { url: format!("http://127.0.0.1:{port}/mcp"), headers: BTreeMap::new() },
        enabled: true,
        disabled_tools: Vec::new(),
    };
    let hub = McpHub::new(vec![config], Timeouts::default());
    let tools = hub.tools("everything-http").await.expect("it answers");
    assert!(tools.iter().any(|t| t.name == "echo"));
    assert_eq!(
        text_of(hub.call("everything-http", "echo", json!({"message": "over http"}), &CallOptions::default()).await),
        "Echo: over http"
    );

    let (progress, mut told) = mpsc::unbounded_channel();
    let options = CallOptions { progress: Some(progress), ..CallOptions::default() };
    let done = hub.call("everything-http", "trigger-long-running-operation", json!({"duration": 0.3, "steps": 3}), &options).await;
    assert!(text_of(done).contains("completed"));
    assert!(std::iter::from_fn(|| told.try_recv().ok()).count() >= 2, "the steps before the last");

    hub.stop_all().await;
    server.kill().await.unwrap();

    // Nothing listening: a failure in words, not a hang.
    let gone = McpServerConfig {
        name: "gone".into(),
        transport: McpTransport::Http { url: format!("http://127.0.0.1:{port}/mcp"), headers: BTreeMap::new() },
        enabled: true,
        disabled_tools: Vec::new(),
    };
    let hub = McpHub::new(vec![gone], timeouts(Duration::from_secs(10)));
    let error = hub.tools("gone").await.expect_err("nothing listens");
    assert!(matches!(error, McpError::Failed { .. }), "{error}");
}

/// A server that dies during a call: the call ends in words (how it ended, its last words), the
/// server shows as failed with its stderr, and a restart brings it back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_mid_call() {
    let hub = McpHub::new(vec![hostile("crashy", "tools")], Timeouts::default());
    let error = hub.call("crashy", "crash", json!({"why": "out of cheese"}), &CallOptions::default()).await.expect_err("it crashes");
    let McpError::Failed { server, message } = &error else { panic!("{error}") };
    assert_eq!(server, "crashy");
    assert!(message.contains("exited with status 3"), "{message}");
    assert!(message.contains("panic: out of cheese"), "{message}");
    let McpServerState::Failed { stderr, .. } = &hub.statuses()[0].state else { panic!("{:?}", hub.statuses()) };
    assert!(stderr.iter().any(|l| l.contains("out of cheese")), "{stderr:?}");

    let again = hub.call("crashy", "fail", json!({}), &CallOptions::default()).await;
    assert!(matches!(again, Err(McpError::Failed { .. })), "stays failed until restarted: {again:?}");
    hub.restart("crashy").await.expect("it starts again");
    let failed = hub.call("crashy", "fail", json!({}), &CallOptions::default()).await.expect("a tool error is a result");
    assert!(failed.is_error);
    assert_eq!(failed.text, "the disk is full");

    // A call that never ends is stopped by the user; the server hears of it.
    let cancel = CancellationToken::new();
    let options = CallOptions { cancel: cancel.clone(), ..CallOptions::default() };
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    assert_eq!(hub.call("crashy", "hang", json!({}), &options).await, Err(McpError::Cancelled));
    stopper.await.unwrap();

    // A call that stays silent past its limit ends in words.
    let options = CallOptions { silence: Duration::from_millis(500), ..CallOptions::default() };
    assert_eq!(hub.call("crashy", "hang", json!({}), &options).await, Err(McpError::Silent(Duration::from_millis(500))));
    hub.stop_all().await;
}

/// Servers that cannot start, each told in words with what it wrote; the others are not held up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_fail_to_start() {
    let missing = McpServerConfig {
        transport: McpTransport::Stdio { command: "hearth-no-such-mcp-server".into(), args: vec![], env: BTreeMap::new(), cwd: None },
        ..hostile("missing", "tools")
    };
    let configs = vec![hostile("exits", "exit"), hostile("silent", "silent"), hostile("garbage", "garbage"), missing];
    let hub = McpHub::new(configs, timeouts(Duration::from_secs(3)));
    hub.start_all().await;

    let message = |name: &str| match hub.statuses().into_iter().find(|s| s.config.name == name).unwrap().state {
        McpServerState::Failed { message, .. } => message,
        other => panic!("{name}: {other:?}"),
    };
    let exits = message("exits");
    assert!(exits.contains("exited with status 2") && exits.contains("config.json was not found"), "{exits}");
    assert!(message("silent").contains("did not answer within 3 s"), "{}", message("silent"));
    let garbage = message("garbage");
    assert!(garbage.contains("not MCP") && garbage.contains("Welcome to a server"), "{garbage}");
    assert!(message("missing").contains("could not start \"hearth-no-such-mcp-server\""), "{}", message("missing"));

    hub.stop_all().await;

    // Stray lines before the protocol are set aside; the server works.
    let hub = McpHub::new(vec![hostile("noisy", "noisy")], Timeouts::default());
    assert!(hub.call("noisy", "fail", json!({}), &CallOptions::default()).await.unwrap().is_error);
    hub.stop_all().await;
}

/// What the user switched off is never started or called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switched_off_servers_and_tools() {
    let off = McpServerConfig { enabled: false, ..hostile("off", "tools") };
    let picky = McpServerConfig { disabled_tools: vec!["crash".into()], ..hostile("picky", "tools") };
    let hub = McpHub::new(vec![off, picky], Timeouts::default());
    hub.start_all().await;
    assert_eq!(hub.statuses()[0].state, McpServerState::Off);
    assert_eq!(hub.call("off", "fail", json!({}), &CallOptions::default()).await, Err(McpError::Off("off".into())));
    let refused = hub.call("picky", "crash", json!({"why": "x"}), &CallOptions::default()).await;
    assert_eq!(refused, Err(McpError::ToolOff { server: "picky".into(), tool: "crash".into() }));
    assert!(matches!(hub.statuses()[1].state, McpServerState::Ready { .. }), "the server lives on");
    assert_eq!(hub.call("nobody", "x", json!({}), &CallOptions::default()).await, Err(McpError::UnknownServer("nobody".into())));
    hub.stop_all().await;
}

/// A turn's start waits for a server another caller is already starting (a restart, another
/// turn): its tools are there when `start_all` returns, not left out as "starting".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starting_all_waits_for_a_server_already_starting() {
    let hub = McpHub::new(vec![hostile("kitchen", "kitchen")], Timeouts::default());
    let first = {
        let hub = hub.clone();
        tokio::spawn(async move { hub.tools("kitchen").await })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while hub.statuses()[0].state == McpServerState::Idle {
        assert!(Instant::now() < deadline, "the first caller never started the server");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    hub.start_all().await;
    assert!(matches!(hub.statuses()[0].state, McpServerState::Ready { .. }), "{:?}", hub.statuses()[0].state);
    assert!(!first.await.unwrap().expect("the first caller gets the tools").is_empty());
    hub.stop_all().await;
}

/// The reference filesystem server: a file read in the folder it was given, one outside refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_filesystem_server() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("notes.txt"), "The kettle is in the left cupboard.").unwrap();
    let script = servers_dir().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let root = folder.path().canonicalize().unwrap();
    let hub = McpHub::new(vec![stdio("files", &[&script.display().to_string(), &root.display().to_string()])], Timeouts::default());
    let tools = hub.tools("files").await.expect("it starts");
    let read = tools.iter().find(|t| t.name == "read_text_file").expect("read_text_file");
    assert!(read.read_only, "it says it changes nothing");
    assert!(!tools.iter().find(|t| t.name == "write_file").unwrap().read_only);

    let notes = root.join("notes.txt").display().to_string();
    let outcome = hub.call("files", "read_text_file", json!({"path": notes}), &CallOptions::default()).await.unwrap();
    assert_eq!(outcome.text, "The kettle is in the left cupboard.");
    let listed = hub.call("files", "list_directory", json!({"path": root.display().to_string()}), &CallOptions::default()).await.unwrap();
    assert!(listed.text.contains("notes.txt"), "{}", listed.text);

    let outside = hub.call("files", "read_text_file", json!({"path": "/etc/hostname"}), &CallOptions::default()).await;
    match outside {
        Ok(outcome) => assert!(outcome.is_error && outcome.text.contains("denied"), "{outcome:?}"),
        Err(error) => assert!(error.to_string().contains("denied"), "{error}"),
    }
    hub.stop_all().await;
}

/// At quit the app may exit from one of the runtime's own threads: the servers are killed there
/// without blocking on the runtime, each process group whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_are_killed_at_quit_without_the_runtime() {
    let hub = McpHub::new(vec![hostile("quitting", "tools")], Timeouts::default());
    hub.tools("quitting").await.expect("it starts");
    hub.kill_all_now();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let McpServerState::Failed { message, .. } = &hub.statuses()[0].state {
            assert!(message.contains("signal"), "{message}");
            break;
        }
        assert!(Instant::now() < deadline, "the server was not killed: {:?}", hub.statuses()[0].state);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A server's question mid-call (elicitation), on the reference server: its tool is offered only
/// to a client that answers questions; the form is asked of the user (here an asker that fills
/// two fields), and the server gets the answer with the defaults of the fields left out; a
/// declined question is said to the server as declined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_question_is_asked_and_answered() {
    use hearth_mcp::questions::{Answer, FieldKind, Question};
    use std::sync::{Arc, Mutex};

    let plain = McpHub::new(vec![stdio("everything", &[&everything_js(), "stdio"])], Timeouts::default());
    let tools = plain.tools("everything").await.expect("it starts");
    for asking in ["trigger-elicitation-request", "trigger-url-elicitation"] {
        assert!(!tools.iter().any(|t| t.name == asking), "no questions for a client that answers none");
    }
    plain.stop_all().await;

    let asked: Arc<Mutex<Vec<Question>>> = Arc::default();
    let seen = asked.clone();
    let hub = McpHub::new(vec![stdio("everything", &[&everything_js(), "stdio"])], Timeouts::default());
    hub.set_asker(Arc::new(move |question| {
        seen.lock().unwrap().push(question);
        let answer = match seen.lock().unwrap().len() {
            1 => Answer::Accept {
                content: json!({"name": "Ada Lovelace", "integer": 7, "color": "not asked for"}).as_object().unwrap().clone(),
            },
            _ => Answer::Decline,
        };
        Box::pin(async move { answer })
    }));
    let outcome = text_of(hub.call("everything", "trigger-elicitation-request", json!({}), &CallOptions::default()).await);
    let question = asked.lock().unwrap()[0].clone();
    assert_eq!((question.server.as_str(), question.message.as_str()), ("everything", "Please provide inputs for the following fields:"));
    let email = question.fields.iter().find(|f| f.name == "email").expect("the email field");
    assert!(matches!(&email.kind, FieldKind::Text { format: Some(f), .. } if f == "email"));
    assert!(question.fields.iter().any(|f| f.name == "titledMultipleSelectEnum" && matches!(f.kind, FieldKind::Choices { .. })));
    assert!(outcome.contains("- Name: Ada Lovelace") && outcome.contains("- Favorite Integer: 7"), "{outcome}");
    assert!(outcome.contains("- Favorite Number: 3.14"), "the default of a field left out: {outcome}");
    assert!(!outcome.contains("not asked for"), "nothing the form did not ask for: {outcome}");

    let declined = text_of(hub.call("everything", "trigger-elicitation-request", json!({}), &CallOptions::default()).await);
    assert!(declined.contains("User declined to provide the requested information"), "{declined}");
    hub.stop_all().await;
}

/// A server's question by link (URL mode), on the reference server: the page is shown checked
/// (its host apart), and the server hears that it was opened only when the user said yes; an
/// address that hides where it leads is declined without asking. A call the server refuses until
/// a page is opened first (-32042) asks about that page, and is made again once it was opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_link_is_checked_shown_and_said_yes_or_no_to() {
    use hearth_mcp::questions::{Answer, Question};
    use std::sync::{Arc, Mutex};

    let asked: Arc<Mutex<Vec<Question>>> = Arc::default();
    let seen = asked.clone();
    let hub = McpHub::new(vec![stdio("everything", &[&everything_js(), "stdio"])], Timeouts::default());
    let open_it = || Answer::Accept { content: serde_json::Map::new() };
    let answers = Mutex::new(vec![open_it(), Answer::Decline, open_it(), open_it(), Answer::Decline].into_iter());
    hub.set_asker(Arc::new(move |question| {
        seen.lock().unwrap().push(question);
        let answer = answers.lock().unwrap().next().expect("no more questions than answers");
        Box::pin(async move { answer })
    }));
    let calls = &hub;
    let call = move |url: &str, first: bool| {
        let arguments = json!({"url": url, "message": "Link your bistro account to book.", "errorPath": first});
        async move { calls.call("everything", "trigger-url-elicitation", arguments, &CallOptions::default()).await }
    };
    let open = move |url: &str| {
        let asked = call(url, false);
        async move { text_of(asked.await) }
    };
    let opened = open("https://bistro.example/link?session=7").await;
    assert!(opened.contains("User completed the URL elicitation flow"), "{opened}");
    let question = asked.lock().unwrap()[0].clone();
    assert_eq!((question.server.as_str(), question.message.as_str()), ("everything", "Link your bistro account to book."));
    let link = question.link.expect("a question by link");
    assert_eq!((link.url.as_str(), link.host.as_str(), link.warning), ("https://bistro.example/link?session=7", "bistro.example", None));
    assert!(question.fields.is_empty());

    let hidden = open("https://bank.example@evil.example/login").await;
    assert!(hidden.contains("User declined to open the URL"), "{hidden}");
    assert_eq!(asked.lock().unwrap().len(), 1, "declined unseen");
    let declined = open("https://xn--bstro-cta.example/").await;
    assert!(declined.contains("User declined to open the URL"), "{declined}");
    let warned = asked.lock().unwrap()[1].link.clone().unwrap();
    assert!(warned.warning.as_deref().is_some_and(|w| w.contains("another alphabet")), "{warned:?}");

    // A page first: asked, opened, and the call made again (which then asks its own page).
    let after_page = text_of(call("https://bistro.example/pay", true).await);
    assert!(after_page.contains("User completed the URL elicitation flow"), "{after_page}");
    let hosts: Vec<String> = asked.lock().unwrap()[2..].iter().map(|q| q.link.as_ref().unwrap().host.clone()).collect();
    assert_eq!(hosts, ["modelcontextprotocol.io", "bistro.example"]);
    // Not opened: the call ends in words.
    let refused = call("https://bistro.example/tip", true).await.unwrap_err().to_string();
    assert!(refused.contains("the user did not open the page it asks to open first, on modelcontextprotocol.io"), "{refused}");
    hub.stop_all().await;
}
