//! Settings → Server in the app (hearth-app, as the window drives it) with the real model over
//! real HTTP: off by default; on, it serves the window's engine and lists what it answered; the
//! network needs a key, which then guards it; requests are saved as chats only when asked; a port
//! in use is said in words; it comes back on at the next start; a request for another model of
//! the library loads it.

use std::path::PathBuf;

use hearth_app::{App, AppPaths, DEFAULT_MODEL_FILE, ServerSettings, SettingsError};
use hearth_core::{HistoryStore, Role};
use serde_json::{Value, json};

fn model_path() -> PathBuf {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    std::fs::canonicalize(path).expect("the test model: run scripts/fetch-model.sh target/test-data")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn refused_field(result: Result<hearth_app::ServerStatus, SettingsError>) -> String {
    match result {
        Err(SettingsError::Invalid(e)) => e.field,
        other => panic!("expected a refused field, got {other:?}"),
    }
}

async fn get(url: &str, key: Option<&str>) -> Result<(u16, Value), reqwest::Error> {
    let request = reqwest::Client::new().get(url);
    let request = match key {
        Some(key) => request.bearer_auth(key),
        None => request,
    };
    let response = request.send().await?;
    Ok((response.status().as_u16(), response.json().await?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_apps_server_follows_its_settings_and_serves_the_windows_engine() {
    // SAFETY: this binary's one test sets it before any engine starts.
    unsafe { std::env::set_var("HEARTH_ENGINE_HOST", env!("CARGO_BIN_EXE_hearth-cli")) };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("models")).unwrap();
    std::os::unix::fs::symlink(model_path(), data.join("models").join(DEFAULT_MODEL_FILE)).unwrap();
    let app = App::open(AppPaths::under(data.clone())).await.unwrap();
    app.models.load_at_start(&app.paths.models_dir).await;
    let model = app.models.loaded().unwrap().name;

    // Off by default.
    let status = app.server_status().await.unwrap();
    assert_eq!((status.settings, status.url.as_deref(), status.key_set), (ServerSettings::default(), None, false));

    // On: the loaded model is served, and the request is listed.
    let port = free_port();
    let on = ServerSettings { enabled: true, port, ..ServerSettings::default() };
    let url = app.set_server(on.clone()).await.unwrap().url.expect("listening");
    assert_eq!(url, format!("http://127.0.0.1:{port}/v1"));
    let (status, listed) = get(&format!("{url}/models"), None).await.unwrap();
    assert_eq!((status, listed["data"][0]["id"].as_str()), (200, Some(model.as_str())));
    let ask = json!({ "model": model, "messages": [{ "role": "user", "content": "Hi" }], "max_tokens": 4 });
    let reply: Value =
        reqwest::Client::new().post(format!("{url}/chat/completions")).json(&ask).send().await.unwrap().json().await.unwrap();
    assert_eq!(reply["object"], "chat.completion", "{reply}");
    let requests = app.server_status().await.unwrap().requests;
    assert_eq!((requests.len(), requests[0].status, requests[0].model.as_str()), (1, 200, model.as_str()));
    assert!(requests[0].completion_tokens >= 1 && requests[0].prompt_tokens > 0, "{requests:?}");

    // Another model of the library, named by a request: loaded as the user would load it, and
    // the next request for the first loads that one again.
    std::os::unix::fs::symlink(model_path(), data.join("models").join("second-model.gguf")).unwrap();
    let (_, listed) = get(&format!("{url}/models"), None).await.unwrap();
    let ids: Vec<&str> = listed["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert!(ids[0] == model && ids.contains(&"second-model"), "{ids:?}");
    let ask = json!({ "model": "second-model", "messages": [{ "role": "user", "content": "Hi" }], "max_tokens": 4 });
    let reply: Value =
        reqwest::Client::new().post(format!("{url}/chat/completions")).json(&ask).send().await.unwrap().json().await.unwrap();
    assert_eq!(reply["model"], "second-model", "{reply}");
    assert_eq!(app.models.loaded().unwrap().name, "second-model");

    // Requests are not kept as chats unless the user asks; then each answered one is.
    assert!(app.store.list_chats().await.unwrap().is_empty());
    app.set_server(ServerSettings { save_requests: true, ..on.clone() }).await.unwrap();
    let ask = json!({ "model": model, "messages": [{ "role": "system", "content": "Be brief." }, { "role": "user", "content": "Hi" }], "max_tokens": 4 });
    let reply: Value =
        reqwest::Client::new().post(format!("{url}/chat/completions")).json(&ask).send().await.unwrap().json().await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    // Written in the background: done once the reply is there with its stats.
    let (saved, messages) = loop {
        if let Some(chat) = app.store.list_chats().await.unwrap().pop() {
            let messages = app.store.messages(chat.id).await.unwrap();
            if messages.last().is_some_and(|m| m.stats.is_some()) {
                break (app.store.chat(chat.id).await.unwrap(), messages);
            }
        }
        assert!(std::time::Instant::now() < deadline, "the request was not saved as a chat");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert!(saved.title.starts_with("API · 127.0.0.1:"), "{saved:?}");
    assert_eq!(app.store.system_prompt(saved.id).await.unwrap(), "Be brief.");
    let shown: Vec<(Role, &str)> = messages.iter().map(|m| (m.role, m.content.as_str())).collect();
    assert_eq!(shown, [(Role::User, "Hi"), (Role::Assistant, reply["choices"][0]["message"]["content"].as_str().unwrap())]);
    assert_eq!(messages[1].stats.as_ref().map(|s| s.completion_tokens), reply["usage"]["completion_tokens"].as_u64().map(|n| n as u32));
    assert_eq!(app.models.loaded().unwrap().name, model);
    app.set_server(on.clone()).await.unwrap();

    // Web pages: refused unless their origin is allowed (typed as the user would; kept as
    // browsers send it); an origin that is not one is refused by field.
    let from = |origin: &'static str| {
        let request = reqwest::Client::new().get(format!("{url}/models")).header("origin", origin);
        async move {
            let response = request.send().await.unwrap();
            let cors = response.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap().to_owned());
            (response.status().as_u16(), cors)
        }
    };
    assert_eq!(from("https://chat.example.org").await, (403, None));
    let bad = ServerSettings { allowed_origins: vec!["chat.example.org/path".into()], ..on.clone() };
    assert_eq!(refused_field(app.set_server(bad).await), "allowedOrigins");
    let allowed = ServerSettings { allowed_origins: vec![" HTTPS://Chat.Example.org/ ".into()], ..on.clone() };
    assert_eq!(app.set_server(allowed).await.unwrap().settings.allowed_origins, ["https://chat.example.org"]);
    assert_eq!(from("https://chat.example.org").await, (200, Some("https://chat.example.org".into())));
    assert_eq!(from("https://evil.example").await, (403, None));
    app.set_server(on.clone()).await.unwrap();

    // The network needs a key; an empty key or removing it while open is refused by field.
    assert_eq!(refused_field(app.set_server(ServerSettings { network: true, ..on.clone() }).await), "network");
    assert_eq!(refused_field(app.set_server(ServerSettings { port: 0, ..on.clone() }).await), "port");
    assert_eq!(refused_field(app.set_server_key(Some("  ".into())).await), "key");
    assert!(app.set_server_key(Some("sk-hearth-app-test".into())).await.unwrap().key_set);
    // The running server takes the key at once.
    assert_eq!(get(&format!("{url}/models"), None).await.unwrap().0, 401);
    assert_eq!(get(&format!("{url}/models"), Some("sk-hearth-app-test")).await.unwrap().0, 200);
    let open = app.set_server(ServerSettings { network: true, ..on.clone() }).await.unwrap();
    assert!(open.url.is_some() && open.settings.network, "{open:?}");
    assert_eq!(refused_field(app.set_server_key(None).await), "key");
    app.set_server(on.clone()).await.unwrap();
    assert!(!app.set_server_key(None).await.unwrap().key_set);
    assert_eq!(get(&format!("{url}/models"), None).await.unwrap().0, 200);

    // A port another program holds: said in words, not an error.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().port();
    let status = app.set_server(ServerSettings { port: busy, ..on.clone() }).await.unwrap();
    assert_eq!(status.url, None);
    assert!(status.problem.as_deref().is_some_and(|p| p.contains("in use")), "{status:?}");

    // Back on its own port; off closes it; on again at the next start as the user left it.
    app.set_server(on.clone()).await.unwrap();
    app.set_server(ServerSettings { enabled: false, ..on.clone() }).await.unwrap();
    assert!(get(&format!("{url}/models"), None).await.is_err(), "closed");
    app.set_server(on.clone()).await.unwrap();
    app.server.stop();
    app.engine.shutdown();
    drop(app);
    let app = App::open(AppPaths::under(data)).await.unwrap();
    app.start_server().await.unwrap();
    assert_eq!(app.server_status().await.unwrap().url, Some(url.clone()));
    assert_eq!(get(&format!("{url}/models"), None).await.unwrap().0, 200);
    app.server.stop();
    app.engine.shutdown();
}
