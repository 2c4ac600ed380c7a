//! The model manager through the commands the window calls, on Tauri's mock runtime, against a
//! local fake of the Hugging Face hub (real HTTP): search → files → fit → download (progress,
//! verified) → library → load (progress) → chat → unload; a bad file keeps the loaded model; a
//! gated repository asks for the token, which opens it.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tauri::Manager;

use common::{invoke, model_path, recording_channel, start_app};
use hearth_shell::AppState;
use hearth_shell::ipc::models::{load_chat_model, use_local_model};
use hearth_testkit::fake_hub::{self, FakeFile, FakeHub, FakeRepo, TOKEN};
use hearth_testkit::gguf;
use tauri::async_runtime::block_on;

const SMOL: &str = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF";
const FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
const GATED: &str = "meta-llama/Llama-3.2-1B-Instruct-GGUF";

#[test]
fn search_download_load_and_chat_through_ipc() {
    let model = std::fs::read(model_path()).unwrap();
    let hub = FakeHub::new(vec![
        FakeRepo { id: SMOL.into(), gated: false, downloads: 7, likes: 1, files: vec![FakeFile::new(FILE, model)] },
        FakeRepo {
            id: GATED.into(),
            gated: true,
            downloads: 9,
            likes: 2,
            files: vec![FakeFile::new("Llama-3.2-1B-Instruct-Q4_K_M.gguf", vec![1; 64])],
        },
    ]);
    let (url, _fake) = tauri::async_runtime::block_on(fake_hub::start(hub));
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: set before the app (or any thread) reads the environment.
    unsafe {
        std::env::set_var("HF_ENDPOINT", &url);
        std::env::set_var("HF_HUB_CACHE", dir.path().join("hf-cache"));
    }
    let (app, window) = start_app(&dir.path().join("data"));
    let state = app.state::<AppState>();

    let found = invoke(&window, "hub_search", json!({ "query": "SmolLM2" })).unwrap();
    assert_eq!(found[0]["id"], SMOL);
    let quants = invoke(&window, "hub_repo_files", json!({ "repo": SMOL })).unwrap();
    assert_eq!(quants[0]["quant"], "Q4_1");
    assert_eq!(quants[0]["files"], json!([FILE]));
    let fit = invoke(&window, "hub_fit", json!({ "repo": SMOL, "file": FILE, "contextLength": 4096 })).unwrap();
    assert_eq!((fit["verdict"]["kind"].as_str(), fit["contextLength"].as_u64()), (Some("fits"), Some(4096)));
    assert_eq!(fit["kvCacheBytes"], 90 << 20);
    assert_eq!(fit["facts"]["quantization"], "Q4_1");

    // Gated: the files are refused until the token is saved (kept in the keychain).
    let refused = invoke(&window, "hub_repo_files", json!({ "repo": GATED })).unwrap_err();
    assert_eq!(refused["kind"], "hubAuth", "{refused}");
    let saved = invoke(&window, "set_hub_token", json!({ "token": TOKEN })).unwrap();
    assert_eq!(saved["stored"], true);
    assert_eq!(invoke(&window, "hub_repo_files", json!({ "repo": GATED })).unwrap()[0]["files"][0], "Llama-3.2-1B-Instruct-Q4_K_M.gguf");
    assert_eq!(invoke(&window, "set_hub_token", json!({ "token": null })).unwrap()["stored"], false);
    assert_eq!(invoke(&window, "hub_repo_files", json!({ "repo": GATED })).unwrap_err()["kind"], "hubAuth");
    let climbing = invoke(&window, "start_download", json!({ "repo": SMOL, "quant": "x", "files": ["../../x.gguf"] })).unwrap_err();
    assert_eq!(climbing["kind"], "invalidInput");

    let (channel, updates) = recording_channel();
    hearth_shell::ipc::hub::watch_downloads(channel, state.clone());
    let started = invoke(&window, "start_download", json!({ "repo": SMOL, "quant": "Q4_1", "files": [FILE] })).unwrap();
    let id = started["id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(120);
    let done = loop {
        let list = invoke(&window, "list_downloads", json!({})).unwrap();
        let d = list.as_array().unwrap().iter().find(|d| d["id"] == id.as_str()).cloned().unwrap();
        if d["state"] == "done" || d["state"] == "failed" {
            break d;
        }
        assert!(Instant::now() < deadline, "{d}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(done["state"], "done", "{done}");
    let heard: Vec<Value> = updates.lock().unwrap().clone();
    assert!(heard.iter().any(|d| d["state"] == "verifying") && heard.last().unwrap()["state"] == "done");
    let path = done["modelPath"].as_str().unwrap().to_owned();

    let library = invoke(&window, "list_library", json!({})).unwrap();
    let listed: Vec<&Value> = library.as_array().unwrap().iter().filter(|m| m["source"] == "hubCache").collect();
    assert_eq!(listed.len(), 1, "{library}");
    assert_eq!((listed[0]["path"].as_str(), listed[0]["repo"].as_str()), (Some(path.as_str()), Some(SMOL)));

    // Load it, hearing the progress; then chat with it.
    state_settled(&app);
    let (progress, fractions) = recording_channel();
    let loaded = tauri::async_runtime::block_on(hearth_shell::ipc::hub::load_model(path.clone(), progress, state.clone())).unwrap();
    assert_eq!(loaded.path, path);
    let fractions: Vec<f64> = fractions.lock().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!(fractions.len() > 2 && *fractions.last().unwrap() >= 0.99 && fractions.windows(2).all(|w| w[0] <= w[1]), "{fractions:?}");
    let chat = invoke(&window, "create_chat", json!({})).unwrap()["id"].as_i64().unwrap();
    let (channel, events) = recording_channel();
    tauri::async_runtime::block_on(hearth_shell::ipc::chat::send_message(
        app.handle().clone(),
        chat,
        "Say hello.".into(),
        Vec::new(),
        channel,
        state.clone(),
    ))
    .unwrap();
    assert_eq!(events.lock().unwrap().last().unwrap()["event"], "finished");
    assert_eq!(invoke(&window, "delete_model", json!({ "path": path })).unwrap_err()["kind"], "busy");

    // A bad file is refused before llama.cpp sees it, and the loaded model stays.
    let bad = dir.path().join("bad.gguf");
    std::fs::write(&bad, b"GGUF but nothing else").unwrap();
    let (progress, _) = recording_channel();
    let error =
        tauri::async_runtime::block_on(hearth_shell::ipc::hub::load_model(bad.display().to_string(), progress, state.clone())).unwrap_err();
    assert_eq!(error.kind, hearth_shell::ipc::IpcErrorKind::File);
    assert!(error.message.contains("bad.gguf"), "{}", error.message);
    assert_eq!(invoke(&window, "active_model", json!({})).unwrap()["path"], path.as_str());
    // Hostile files met in the wild get words, not a crash of the app or the engine: arrays of
    // arrays 100,000 deep (overflowed the app's stack), and an architecture llama.cpp does not
    // know (llama.cpp's own words; the previous model is loaded again).
    let real = std::fs::read(model_path()).unwrap();
    let hostile = [
        ("nested.gguf", gguf::with_kv(&real, "x.nested", gguf::ARRAY, &gguf::nested_arrays(100_000)), "x.nested is an array of arrays"),
        (
            "arch.gguf",
            gguf::with_kv(&real, "general.architecture", gguf::STRING, &gguf::string("hearthtest")),
            "unknown model architecture: 'hearthtest'",
        ),
    ];
    for (name, bytes, words) in hostile {
        let file = dir.path().join(name);
        std::fs::write(&file, bytes).unwrap();
        let (progress, _) = recording_channel();
        let error = tauri::async_runtime::block_on(hearth_shell::ipc::hub::load_model(file.display().to_string(), progress, state.clone()))
            .unwrap_err();
        assert!(error.message.contains(words), "{name}: {}", error.message);
        assert_eq!(invoke(&window, "active_model", json!({})).unwrap()["path"], path.as_str(), "{name}");
    }
    assert_eq!(state.engine.last_crash(), None);
    // Cancel, pressed while a load is under way: that load is given up and the model loaded
    // before it is loaded again.
    let other = dir.path().join("other.gguf");
    std::fs::copy(model_path(), &other).unwrap();
    let handle = app.handle().clone();
    let press_cancel = tauri::ipc::Channel::<f32>::new(move |_| {
        handle.state::<AppState>().models.cancel_load();
        Ok(())
    });
    let error =
        tauri::async_runtime::block_on(hearth_shell::ipc::hub::load_model(other.display().to_string(), press_cancel, state.clone()))
            .unwrap_err();
    assert!(error.message.contains("other.gguf was cancelled") && error.message.contains("is loaded again"), "{}", error.message);
    assert_eq!(invoke(&window, "active_model", json!({})).unwrap()["path"], path.as_str());
    assert!(!state.models.cancel_load(), "no load is under way any more");

    // Each chat talks to its own local model: the one it first answered with, or the one
    // picked for it. Opening a chat loads its model; a reply in it loads it first if needed.
    let chats = invoke(&window, "list_chats", json!({})).unwrap();
    assert_eq!(chats[0]["model"], json!({ "kind": "local", "model": path }), "remembered at its first reply");
    let stem = Path::new(&path).file_stem().unwrap().to_str().unwrap().to_owned();
    assert_eq!(chats[0]["modelName"], stem.as_str(), "named as the engine names it");
    let other_chat = invoke(&window, "create_chat", json!({})).unwrap()["id"].as_i64().unwrap();
    let (progress, fractions) = recording_channel();
    let picked = block_on(use_local_model(other_chat, other.display().to_string(), progress, state.clone())).unwrap();
    assert_eq!(picked.chat.model.local_model(), Some(other.to_str().unwrap()));
    assert_eq!(picked.loaded.map(|m| m.path), Some(other.display().to_string()));
    assert!(!fractions.lock().unwrap().is_empty(), "the load reports its progress");
    let opened = |id| {
        let (progress, _) = recording_channel();
        block_on(load_chat_model(id, progress, state.clone())).map(|m| m.map(|m| m.path))
    };
    assert_eq!(opened(chat).unwrap(), Some(path.clone()), "opening the first chat loads its model");
    assert_eq!(opened(chat).unwrap(), None, "already loaded");
    // A turn whose model is not loaded goes at once: its model loads first, said on its events.
    let (channel, events) = recording_channel();
    block_on(hearth_shell::ipc::chat::send_message(app.handle().clone(), other_chat, "Hi.".into(), Vec::new(), channel, state.clone()))
        .unwrap();
    assert_loaded_first(&events.lock().unwrap(), other.to_str().unwrap(), "other");
    assert_eq!(invoke(&window, "active_model", json!({})).unwrap()["path"], other.to_str().unwrap(), "its model answered");
    // The first chat's model, left for the other, stays in memory (within the default budget).
    let kept = invoke(&window, "chat_cache_usage", json!({})).unwrap()["keptModelBytes"].clone();
    assert_eq!(kept, std::fs::metadata(&path).unwrap().len(), "kept in memory");
    // A chat's model whose file is gone: words, and the loaded model stays.
    let gone = dir.path().join("gone.gguf");
    std::fs::copy(model_path(), &gone).unwrap();
    let gone_chat = invoke(&window, "create_chat", json!({})).unwrap()["id"].as_i64().unwrap();
    let target = json!({ "kind": "local", "model": gone.to_str().unwrap() });
    invoke(&window, "set_chat_model", json!({ "chatId": gone_chat, "target": target })).unwrap();
    std::fs::remove_file(&gone).unwrap();
    let error = opened(gone_chat).unwrap_err();
    assert_eq!(error.kind, hearth_shell::ipc::IpcErrorKind::File);
    assert!(error.message.contains("this chat talks to gone, whose file is gone"), "{}", error.message);
    // A turn there is refused before anything is saved, its error about the chat's model.
    let (channel, events) = recording_channel();
    let error =
        block_on(hearth_shell::ipc::chat::send_message(app.handle().clone(), gone_chat, "Hi?".into(), Vec::new(), channel, state.clone()))
            .unwrap_err();
    assert_eq!((error.kind, error.field.as_deref()), (hearth_shell::ipc::IpcErrorKind::File, Some("model")), "{}", error.message);
    assert!(events.lock().unwrap().is_empty(), "no event: nothing started");
    assert_eq!(invoke(&window, "list_messages", json!({ "chatId": gone_chat })).unwrap(), json!([]));
    let refused = invoke(&window, "set_chat_model", json!({ "chatId": gone_chat, "target": target })).unwrap_err();
    assert!(refused["message"].as_str().unwrap().contains("there is no model file at"), "{refused}");
    assert_eq!(invoke(&window, "active_model", json!({})).unwrap()["path"], other.to_str().unwrap());
    // An idle model is unloaded after the time set (never by default); the next reply of a chat
    // loads its model again.
    let budgets = invoke(&window, "chat_cache_usage", json!({})).unwrap()["budgets"].clone();
    assert_eq!(budgets["unloadIdleMinutes"], 0);
    let too_long = json!({ "budgets": { "unloadIdleMinutes": 20_000 } });
    assert_eq!(invoke(&window, "set_chat_cache_budgets", too_long).unwrap_err()["field"], "unloadIdleMinutes");
    assert!(!block_on(state.unload_if_idle(Duration::from_secs(3600))), "not idle that long");
    // Never while the engine is busy: the chat's title is being written after its reply.
    let waited = Instant::now();
    while state.engine.idle_for().is_none() {
        assert!(waited.elapsed() < Duration::from_secs(60), "the title never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(block_on(state.unload_if_idle(Duration::ZERO)));
    assert_eq!(invoke(&window, "active_model", json!({})).unwrap(), Value::Null);
    let (channel, events) = recording_channel();
    block_on(hearth_shell::ipc::chat::send_message(app.handle().clone(), chat, "Hi again.".into(), Vec::new(), channel, state.clone()))
        .unwrap();
    assert_loaded_first(&events.lock().unwrap(), &path, &stem);
    assert_eq!(invoke(&window, "active_model", json!({})).unwrap()["path"], path.as_str());

    // A .gguf the desktop opens Hearth with is imported where it lies and is the model loaded at
    // the next start; a file that is not a model is not.
    let opened = dir.path().join("opened.gguf");
    std::fs::copy(model_path(), &opened).unwrap();
    let not_a_model = dir.path().join("notes.gguf");
    std::fs::write(&not_a_model, b"shopping list").unwrap();
    block_on(state.open_files([dir.path().join("readme.txt"), not_a_model.clone(), opened.clone()]));
    let opened = std::fs::canonicalize(&opened).unwrap().display().to_string();
    let library = invoke(&window, "list_library", json!({})).unwrap();
    let listed: Vec<&str> = library.as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap()).collect();
    assert!(listed.contains(&opened.as_str()) && !listed.iter().any(|p| p.ends_with("notes.gguf")), "{listed:?}");
    assert_eq!(block_on(state.store.setting("active_model")).unwrap(), Some(opened));

    // Without a model loaded, the window's banner says why the other file could not be opened.
    invoke(&window, "unload_model", json!({})).unwrap();
    let said = invoke(&window, "active_model", json!({})).unwrap_err();
    assert!(said["message"].as_str().unwrap().contains("notes.gguf could not be opened"), "{said}");

    // Handed over by a second launch while Hearth runs (its command line relative to the folder
    // it ran in): imported and loaded now.
    let handed = dir.path().join("handed.gguf");
    std::fs::copy(model_path(), &handed).unwrap();
    let handed = std::fs::canonicalize(&handed).unwrap().display().to_string();
    let loaded = block_on(state.open_files_now([std::path::PathBuf::from("handed.gguf")], dir.path())).expect("the handed-over file loads");
    assert_eq!(loaded.path, handed);
    assert_eq!(invoke(&window, "active_model", json!({})).unwrap()["path"], handed.as_str());
    invoke(&window, "delete_model", json!({ "path": path })).unwrap();
    let library = invoke(&window, "list_library", json!({})).unwrap();
    assert!(library.as_array().unwrap().iter().all(|m| m["source"] != "hubCache"), "{library}");
    state.engine.shutdown();
}

/// A turn's events when its chat's model had to be loaded first: `modelLoading` (the file, its
/// name, from 0 up: a load from memory may say no more), then the turn as ever, to its reply.
fn assert_loaded_first(events: &[Value], path: &str, name: &str) {
    let loading: Vec<&Value> = events.iter().take_while(|e| e["event"] == "modelLoading").map(|e| &e["data"]).collect();
    assert!(!loading.is_empty(), "{events:?}");
    assert!(loading.iter().all(|l| l["path"] == path && l["name"] == name), "{loading:?}");
    let fractions: Vec<f64> = loading.iter().map(|l| l["fraction"].as_f64().unwrap()).collect();
    assert_eq!(fractions[0], 0.0, "said as the load begins");
    assert!(fractions.windows(2).all(|w| w[0] <= w[1]) && fractions.iter().all(|f| (0.0..=1.0).contains(f)), "{fractions:?}");
    let rest: Vec<&str> = events[loading.len()..].iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!((rest.first(), rest.last()), (Some(&"userSaved"), Some(&"finished")), "{rest:?}");
}

/// Waits for the start-up load (of the data dir's model) to finish, so it does not race ours.
fn state_settled(app: &tauri::App<tauri::test::MockRuntime>) {
    tauri::async_runtime::block_on(app.state::<AppState>().models.settled());
}
