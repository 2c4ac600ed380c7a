//! The app on Tauri's mock runtime switching one chat between the real local model and a remote
//! provider (a local server speaking OpenAI's wire format over real HTTP), through the commands
//! the window calls; and the API key never reaching the history file, the log or an export.

use hearth_testkit::fake_provider as fake;

mod common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tauri::Manager;
use tauri::test::MockRuntime;

use common::{invoke, recording_channel, start_app};

use hearth_core::ExportFormat;
use hearth_shell::AppState;
use hearth_shell::ipc::chat::send_message;

/// Sends `text` in `chat` and returns the turn's last event (`finished` or `failed`).
fn send(app: &tauri::AppHandle<MockRuntime>, chat: i64, text: &str) -> Value {
    let (channel, events) = recording_channel();
    tauri::async_runtime::block_on(send_message(app.clone(), chat, text.into(), channel, app.state::<AppState>())).expect("the turn runs");
    events.lock().unwrap().last().cloned().unwrap()
}

/// Every file under `dir` (recursively), as bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.ends_with("models") {
            continue; // the model file, linked in
        }
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_chat_switches_between_the_local_model_and_a_provider_and_the_key_stays_secret() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (url, _record) = runtime.block_on(fake::start());
    let data = tempfile::tempdir().unwrap();
    let (app, window) = start_app(data.path());
    let handle = app.handle().clone();

    // A fresh install offers OpenAI and Anthropic, waiting for keys.
    let providers = invoke(&window, "list_providers", json!({})).unwrap();
    let ids: Vec<&str> = providers.as_array().unwrap().iter().map(|p| p["config"]["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["openai", "anthropic"]);
    assert!(providers[0]["key"].is_null());

    let config = json!({ "id": "fake", "name": "Fake", "kind": "openAiCompatible", "baseUrl": url, "models": [],
        "contextLength": null, "extensions": false, "tokenizerRepo": null });
    let bad = json!({ "config": { "id": "bad id", "name": "x", "kind": "openAi", "baseUrl": "http://x.example",
        "models": [], "contextLength": null, "extensions": false, "tokenizerRepo": null } });
    assert_eq!(invoke(&window, "save_provider", bad).unwrap_err()["kind"], "invalidInput");
    invoke(&window, "save_provider", json!({ "config": config })).unwrap();
    let stored = invoke(&window, "set_api_key", json!({ "provider": "fake", "key": fake::GOOD_KEY })).unwrap();
    assert!(["keychain", "file"].contains(&stored["kind"].as_str().unwrap()), "{stored}");
    let report = invoke(&window, "test_provider", json!({ "provider": "fake" })).unwrap();
    assert_eq!(report["models"].as_array().unwrap().len(), 3, "{report}");

    // One chat: local, then remote, then local again; each reply names its model.
    let chat = invoke(&window, "create_chat", json!({})).unwrap()["id"].as_i64().unwrap();
    invoke(&window, "set_sampling", json!({ "params": { "maxTokens": 8 }, "scope": { "kind": "chat", "id": chat } })).unwrap();
    let local = send(&handle, chat, "Hello there");
    assert_eq!(local["event"], "finished", "{local}");
    assert_eq!(local["data"]["message"]["model"], "SmolLM2-135M-Instruct.Q4_1");

    let remote = json!({ "kind": "remote", "provider": "fake", "model": "echo" });
    let summary = invoke(&window, "set_chat_model", json!({ "chatId": chat, "target": remote })).unwrap();
    assert_eq!(summary["model"], remote);
    let echoed = send(&handle, chat, "Is this remote?");
    assert_eq!(echoed["data"]["message"]["content"], "You said: Is this remote?");
    assert_eq!(echoed["data"]["message"]["model"], "echo (Fake)");
    let support = invoke(&window, "sampling_support_for", json!({ "target": remote })).unwrap();
    let top_k = support.as_array().unwrap().iter().find(|s| s["field"] == "topK").unwrap();
    assert_eq!(top_k["supported"], false);
    assert!(top_k["note"].as_str().unwrap().contains("not sent"));

    invoke(&window, "set_chat_model", json!({ "chatId": chat, "target": { "kind": "local" } })).unwrap();
    let back = send(&handle, chat, "And now?");
    assert_eq!(back["data"]["message"]["model"], "SmolLM2-135M-Instruct.Q4_1");
    let models: Vec<Value> = invoke(&window, "list_messages", json!({ "chatId": chat }))
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["model"].clone())
        .collect();
    assert_eq!(models, [json!("SmolLM2-135M-Instruct.Q4_1"), json!("echo (Fake)"), json!("SmolLM2-135M-Instruct.Q4_1")]);

    // Errors reach the window typed, in words, with the wait a rate limit asked for.
    let rate = json!({ "kind": "remote", "provider": "fake", "model": "rate-limited" });
    invoke(&window, "set_chat_model", json!({ "chatId": chat, "target": rate })).unwrap();
    let limited = send(&handle, chat, "Again");
    assert_eq!(limited["event"], "failed");
    assert_eq!(limited["data"]["error"]["kind"], "rateLimited");
    assert_eq!(limited["data"]["error"]["retryAfterS"], 7);
    invoke(&window, "set_chat_model", json!({ "chatId": chat, "target": remote })).unwrap();
    invoke(&window, "set_api_key", json!({ "provider": "fake", "key": "sk-wrong-but-secret-2b" })).unwrap();
    let denied = send(&handle, chat, "With a wrong key");
    assert_eq!(denied["data"]["error"]["kind"], "providerAuth", "{denied}");
    assert!(denied["data"]["error"]["message"].as_str().unwrap().contains("refused the API key (401)"));

    // Neither key is in the history file, the log or an export.
    let exports = data.path().join("exports");
    std::fs::create_dir_all(&exports).unwrap();
    let state = app.state::<AppState>();
    for (format, name) in [(ExportFormat::Json, "all.json"), (ExportFormat::Markdown, "all.md")] {
        tauri::async_runtime::block_on(hearth_shell::export_to(&state.store, None, format, &exports.join(name))).unwrap();
    }
    tauri::async_runtime::block_on(state.store.close());
    let scanned: Vec<(PathBuf, Vec<u8>)> = files_under(data.path())
        .into_iter()
        // keys.json is the fallback file itself, where no keychain answers.
        .filter(|(path, _)| !path.ends_with("keys.json"))
        .collect();
    assert!(scanned.iter().any(|(p, _)| p.ends_with("hearth.db")));
    assert!(scanned.iter().any(|(p, _)| p.to_string_lossy().contains("hearth.log")));
    for (path, bytes) in &scanned {
        for key in [fake::GOOD_KEY, "sk-wrong-but-secret-2b"] {
            assert!(!contains(bytes, key), "{key} found in {}", path.display());
        }
    }
    hearth_shell::shutdown(&handle);
}
