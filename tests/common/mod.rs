//! Shared by the app's integration tests: the app on Tauri's mock runtime with the real model in
//! a fresh data dir, IPC calls as the window makes them, and Channels that record what they hear.
#![allow(dead_code)] // Each test binary uses a different part.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tauri::ipc::{CallbackFn, Channel, InvokeBody, InvokeResponseBody};
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;
use tauri::{App, Manager, WebviewWindow, WebviewWindowBuilder};

pub fn model_path() -> PathBuf {
    let path = std::env::var_os("HEARTH_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf"));
    assert!(path.exists(), "{} is missing: run scripts/fetch-model.sh target/test-data", path.display());
    std::fs::canonicalize(path).unwrap()
}

/// The app with `data` as its data dir (the real model linked into its models folder), started
/// as at launch, and its main window. Call once per test binary: it sets `HEARTH_DATA_DIR`.
pub fn start_app(data: &Path) -> (App<MockRuntime>, WebviewWindow<MockRuntime>) {
    std::fs::create_dir_all(data.join("models")).unwrap();
    std::os::unix::fs::symlink(model_path(), data.join("models/SmolLM2-135M-Instruct.Q4_1.gguf")).unwrap();
    // SAFETY of set_var: each test binary has one test, which calls this before any thread
    // reads the environment.
    unsafe { std::env::set_var("HEARTH_DATA_DIR", data) };
    // The engine process is the app's own binary, as in the real app (not this test binary).
    unsafe { std::env::set_var("HEARTH_ENGINE_HOST", env!("CARGO_BIN_EXE_hearth")) };
    let app = hearth_shell::app_builder(mock_builder()).build(hearth_shell::context()).expect("app builds");
    hearth_shell::init(app.handle()).expect("app initialises");
    let window = match app.get_webview_window("main") {
        Some(w) => w,
        None => WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap(),
    };
    (app, window)
}

pub fn invoke(window: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    get_ipc_response(window, request).map(|body| body.deserialize::<Value>().unwrap())
}

/// A Channel that records every event it is sent.
pub fn recording_channel<T>() -> (Channel<T>, Arc<Mutex<Vec<Value>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let channel = Channel::new(move |body| {
        let value = match body {
            InvokeResponseBody::Json(json) => serde_json::from_str(&json).unwrap(),
            InvokeResponseBody::Raw(_) => panic!("events are JSON"),
        };
        sink.lock().unwrap().push(value);
        Ok(())
    });
    (channel, events)
}

/// Waits until one of the recorded `events` passes `check`; fails after 120 s (a debug build on
/// a loaded machine), or at once when the turn ended (`finished` or `failed`) without one.
pub fn until_event(events: &Mutex<Vec<Value>>, what: &str, check: impl Fn(&Value) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        {
            let events = events.lock().unwrap();
            if events.iter().any(&check) {
                return;
            }
            let ended = events.iter().any(|e| e["event"] == "finished" || e["event"] == "failed");
            assert!(!ended, "the turn ended before {what}: {events:?}");
        }
        assert!(std::time::Instant::now() < deadline, "no {what} within 120 s");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The browser tests' mock answers the inputs in ui/tests/browser/mock/refusals.json with the
/// errors recorded there instead of checking them again itself: each case's command, called here
/// with its arguments as the window sends them, must refuse them with that error (kind, words,
/// field). `UPDATE_REFUSALS=1` writes the backend's answers into the file.
pub fn replay_mock_refusals(window: &WebviewWindow<MockRuntime>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/tests/browser/mock/refusals.json");
    let mut cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut stale = Vec::new();
    for case in &mut cases {
        let cmd = case["cmd"].as_str().unwrap().to_owned();
        let answer = match invoke(window, &cmd, case["args"].clone()) {
            Ok(accepted) => panic!("{cmd} accepts what the mock refuses: {} → {accepted}", case["args"]),
            Err(error) => error,
        };
        let mut error = serde_json::Map::new();
        for key in ["kind", "message", "field"] {
            if let Some(value) = answer.get(key) {
                error.insert(key.into(), value.clone());
            }
        }
        let error = Value::Object(error);
        if case["error"] != error {
            stale.push(format!("{cmd}: recorded {}, the backend says {error}", case["error"]));
            case["error"] = error;
        }
    }
    if std::env::var_os("UPDATE_REFUSALS").is_some() {
        // A case a line: its arguments are whole settings, mostly the defaults.
        let lines: Vec<String> = cases.iter().map(|case| serde_json::to_string(case).unwrap()).collect();
        std::fs::write(&path, format!("[\n{}\n]\n", lines.join(",\n"))).unwrap();
    } else {
        assert!(stale.is_empty(), "the mock's recorded refusals are stale (UPDATE_REFUSALS=1 records them):\n{}", stale.join("\n"));
    }
}
