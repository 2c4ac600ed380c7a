//! The app on Tauri's mock runtime switching one chat between the real local model and a remote
//! provider (a local server speaking OpenAI's wire format over real HTTP), through the commands
//! the window calls; and the API key never reaching the history file, the log or an export.
//! Updates too: a local server announcing a signed package (tauri-plugin-updater's manifest),
//! checked, downloaded and verified against a release key, refused when tampered with.

use hearth_testkit::fake_provider as fake;
use hearth_testkit::gguf;

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
    tauri::async_runtime::block_on(send_message(app.clone(), chat, text.into(), Vec::new(), channel, app.state::<AppState>()))
        .expect("the turn runs");
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

/// A local model takes a reasoning budget where its template reasons in think tags: greyed, with
/// the reason, for SmolLM2 (loaded); taken for a copy of it whose template reasons; greyed again
/// when that copy's load settings choose a template without reasoning.
fn local_reasoning_budget_follows_the_template(app: &tauri::App<MockRuntime>, window: &tauri::WebviewWindow<MockRuntime>) {
    let budget = |target: Value| {
        let support = invoke(window, "sampling_support_for", json!({ "target": target })).unwrap();
        support.as_array().unwrap().iter().find(|s| s["field"] == "reasoningBudget").unwrap().clone()
    };
    let plain = budget(json!({ "kind": "local" }));
    assert_eq!(plain["supported"], false, "{plain}");
    assert!(plain["note"].as_str().unwrap().contains("no reasoning"), "{plain}");

    let model = std::fs::read(std::env::var("HEARTH_TEST_MODEL").unwrap()).unwrap();
    let template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
                    {% if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking is defined and not enable_thinking %}\
                    <think>\n\n</think>\n\n{% endif %}{% endif %}";
    let dir = tempfile::tempdir().unwrap();
    let reasoner = dir.path().join("reasoner.gguf");
    std::fs::write(&reasoner, gguf::with_kv(&model, "tokenizer.chat_template", gguf::STRING, &gguf::string(template))).unwrap();
    let path = reasoner.to_str().unwrap();
    let thinks = budget(json!({ "kind": "local", "model": path }));
    assert_eq!(thinks["supported"], true, "{thinks}");
    assert!(thinks["note"].as_str().unwrap().contains("template"), "{thinks}");

    let chatml = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
    let params = hearth_core::LoadParams { chat_template: Some(chatml.into()), ..Default::default() };
    let settings = &app.state::<AppState>().settings;
    tauri::async_runtime::block_on(settings.set_load_params(path, &params)).unwrap();
    assert_eq!(budget(json!({ "kind": "local", "model": path }))["supported"], false);
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
    local_reasoning_budget_follows_the_template(&app, &window);
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

    updates_are_checked_signed_and_refused_in_words(&runtime, &handle, &window);

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

/// A local update server: the manifest at `/latest.json`, the package at `/hearth.deb` (or at
/// `package_url`).
#[derive(Clone, Default)]
struct Release {
    version: String,
    package: Vec<u8>,
    signature: String,
    package_url: Option<String>,
}

/// A server of `package` whose first `cut` answers stop halfway, the connection closed, as a
/// line that drops does.
async fn serve_cut_package(package: Vec<u8>, cut: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hearth.deb", listener.local_addr().unwrap());
    tokio::spawn(async move {
        for answered in 0.. {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let mut request = vec![0u8; 8192];
            let _ = socket.read(&mut request).await;
            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", package.len());
            let body = if answered < cut { &package[..package.len() / 2] } else { &package[..] };
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body).await;
            let _ = socket.shutdown().await;
        }
    });
    url
}

async fn serve_release(release: Release) -> String {
    use axum::routing::get;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let manifest = {
        let url = release.package_url.clone().unwrap_or_else(|| format!("{base}/hearth.deb"));
        let entry = json!({ "url": url, "signature": release.signature });
        json!({
            "version": release.version,
            "notes": "Faster replies.\nA welcome screen.",
            "pub_date": "2026-11-29T12:00:00Z",
            "platforms": { "linux-x86_64": entry, "linux-x86_64-deb": entry, "linux-x86_64-rpm": entry, "linux-x86_64-appimage": entry },
        })
    };
    let package = release.package.clone();
    let app = axum::Router::new()
        .route("/latest.json", get(move || std::future::ready(axum::Json(manifest.clone()))))
        .route("/hearth.deb", get(move || std::future::ready(package.clone())));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("{base}/latest.json")
}

/// A release key as the Tauri CLI makes one: minisign's boxes, base64-encoded.
struct ReleaseKey {
    public: String,
    pair: minisign::KeyPair,
}

impl ReleaseKey {
    fn new() -> ReleaseKey {
        use base64::Engine;
        let pair = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let public = base64::engine::general_purpose::STANDARD.encode(pair.pk.to_box().unwrap().to_string());
        ReleaseKey { public, pair }
    }

    /// `package` signed for `version`, as `tauri signer sign` writes the `.sig` file.
    fn sign(&self, package: &[u8], version: &str) -> String {
        use base64::Engine;
        let trusted = format!("timestamp:1764417600\tfile:hearth.deb\tversion:{version}");
        let signature = minisign::sign(
            Some(&self.pair.pk),
            &self.pair.sk,
            std::io::Cursor::new(package),
            Some(&trusted),
            Some("signature from tauri secret key"),
        )
        .unwrap();
        base64::engine::general_purpose::STANDARD.encode(signature.to_string())
    }
}

fn updates_are_checked_signed_and_refused_in_words(
    runtime: &tokio::runtime::Runtime,
    app: &tauri::AppHandle<MockRuntime>,
    window: &tauri::WebviewWindow<MockRuntime>,
) {
    use hearth_shell::updates::{UpdateError, UpdateProgress, Updates};
    let current = app.package_info().version.clone();
    let newer = format!("{}.{}.{}", current.major, current.minor, current.patch + 1);
    let key = ReleaseKey::new();
    let updates = Updates::new(Some(&key.public));
    let package: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();

    // A newer release, signed with the release key: found, its notes read, downloaded with
    // progress and verified.
    let endpoint = runtime.block_on(serve_release(Release {
        version: newer.clone(),
        package: package.clone(),
        signature: key.sign(&package, &newer),
        ..Release::default()
    }));
    let found = runtime.block_on(updates.check(app, &endpoint)).unwrap().expect("a newer version is an update");
    assert_eq!((found.version.as_str(), found.current_version.as_str()), (newer.as_str(), current.to_string().as_str()));
    assert_eq!(found.notes.as_deref(), Some("Faster replies.\nA welcome screen."));
    assert_eq!(found.date.as_deref(), Some("2026-11-29T12:00:00Z"));
    let mut seen = Vec::new();
    let bytes = runtime.block_on(updates.download(|p| seen.push(p))).unwrap();
    assert_eq!(bytes, package);
    let Some(UpdateProgress::Downloading { downloaded, total, attempt: 1 }) = seen.last().cloned() else { panic!("{seen:?}") };
    assert_eq!((downloaded, total), (package.len() as u64, Some(package.len() as u64)));

    // A download cut off on the way starts again, and its progress says which try it is; cut
    // off every time, it ends in words.
    let tries = hearth_shell::updates::DOWNLOAD_TRIES as usize;
    for (cut, outcome) in [(tries - 1, Ok(tries as u32)), (tries, Err(tries as u32))] {
        let package_url = runtime.block_on(serve_cut_package(package.clone(), cut));
        let endpoint = runtime.block_on(serve_release(Release {
            version: newer.clone(),
            package: package.clone(),
            signature: key.sign(&package, &newer),
            package_url: Some(package_url),
        }));
        runtime.block_on(updates.check(app, &endpoint)).unwrap().expect("announced");
        let mut seen = Vec::new();
        let result = runtime.block_on(updates.download(|p| seen.push(p)));
        let attempts: Vec<u32> =
            seen.iter().filter_map(|p| if let UpdateProgress::Downloading { attempt, .. } = p { Some(*attempt) } else { None }).collect();
        assert_eq!(attempts.first(), Some(&1));
        assert!(attempts.windows(2).all(|w| w[0] <= w[1]), "{attempts:?}");
        match (result, outcome) {
            (Ok(bytes), Ok(last)) => {
                assert_eq!(bytes, package, "whole after {cut} cuts");
                assert_eq!(attempts.last(), Some(&last));
            }
            (Err(e), Err(tries)) => {
                assert!(matches!(e, UpdateError::CutOff { tries: t, .. } if t == tries), "{e:?}");
                assert!(e.to_string().contains("was cut off 3 times") && e.to_string().contains("Hearth stays as it is"), "{e}");
            }
            (result, outcome) => panic!("{cut} cuts: {:?}, expected {outcome:?}", result.map(|b| b.len())),
        }
    }

    // The same announcement with a byte of the package changed on the way: refused.
    let mut tampered = package.clone();
    tampered[1000] ^= 0xff;
    let endpoint = runtime.block_on(serve_release(Release {
        version: newer.clone(),
        package: tampered,
        signature: key.sign(&package, &newer),
        ..Release::default()
    }));
    runtime.block_on(updates.check(app, &endpoint)).unwrap().expect("announced");
    let refused = runtime.block_on(updates.download(|_| {})).unwrap_err();
    assert!(matches!(refused, UpdateError::Signature(_)), "{refused:?}");
    assert!(refused.to_string().contains("does not match its signature, so it was not installed"), "{refused}");

    // Signed with another key: refused.
    let stranger = ReleaseKey::new();
    let endpoint = runtime.block_on(serve_release(Release {
        version: newer.clone(),
        package: package.clone(),
        signature: stranger.sign(&package, &newer),
        ..Release::default()
    }));
    runtime.block_on(updates.check(app, &endpoint)).unwrap().expect("announced");
    assert!(matches!(runtime.block_on(updates.download(|_| {})), Err(UpdateError::Signature(_))));

    // The same or an older version is no update.
    for version in [current.to_string(), "0.0.1".to_owned()] {
        let endpoint = runtime.block_on(serve_release(Release {
            version: version.clone(),
            package: package.clone(),
            signature: key.sign(&package, &version),
            ..Release::default()
        }));
        assert_eq!(runtime.block_on(updates.check(app, &endpoint)).unwrap(), None, "{version}");
    }

    // The server down: said, nothing changes.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let down = runtime.block_on(updates.check(app, &format!("http://{closed}/latest.json"))).unwrap_err();
    assert!(matches!(down, UpdateError::Unreachable { .. }), "{down:?}");
    assert!(down.to_string().contains("could not be reached") && down.to_string().contains("Hearth stays as it is"), "{down}");

    // A build without a key offers none; through the window: an endpoint must be https (or this
    // machine), and the check goes through the key this build was given (`make test` gives the
    // tests' key; a plain `cargo test` none).
    assert!(matches!(runtime.block_on(Updates::new(None).check(app, &endpoint)), Err(UpdateError::NoKey)));
    let built_with_key = hearth_shell::updates::BUILT_IN_KEY.is_some();
    let status = invoke(window, "update_status", json!({})).unwrap();
    assert_eq!(status["enabled"], built_with_key, "{status}");
    assert_eq!(status["settings"]["checkAtStart"], true);
    let refused = invoke(
        window,
        "set_update_settings",
        json!({ "settings": { "checkAtStart": false, "endpoint": "http://updates.example.org/latest.json" } }),
    )
    .unwrap_err();
    assert_eq!((refused["kind"].as_str(), refused["field"].as_str()), (Some("invalidInput"), Some("endpoint")), "{refused}");
    let saved = invoke(window, "set_update_settings", json!({ "settings": { "checkAtStart": false, "endpoint": endpoint } })).unwrap();
    assert_eq!(saved["settings"]["checkAtStart"], false);
    let checked = invoke(window, "check_update", json!({}));
    if built_with_key {
        assert_eq!(checked.unwrap()["version"], newer.as_str());
    } else {
        assert_eq!(checked.unwrap_err()["kind"], "update");
    }
}
