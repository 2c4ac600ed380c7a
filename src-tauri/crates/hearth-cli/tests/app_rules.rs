//! The app's rules (hearth-app) hold the same for the app and for `hearth-cli`, with the real
//! model and a real history file: the model the user loaded is the one loaded after a restart,
//! and a chat's settings (chat > model > global) give the same reply in the app and through
//! `hearth-cli chat --db` with a fixed seed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hearth_app::{App, AppPaths, DEFAULT_MODEL_FILE};
use hearth_core::{CacheBudgets, ChatId, SamplingParams, SettingsScope};

fn model_path() -> PathBuf {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    std::fs::canonicalize(path).expect("the test model: run scripts/fetch-model.sh target/test-data")
}

/// The app on `data`, started as at launch (its start-up load finished).
async fn start(data: &Path) -> App {
    let app = App::open(AppPaths::under(data.to_path_buf())).await.unwrap();
    app.models.load_at_start(&app.paths.models_dir).await;
    app
}

async fn quit(app: App) {
    app.engine.shutdown();
    drop(app);
}

/// The reply `hearth-cli chat --db` gives in `chat`, as printed.
fn cli_reply(db: &Path, model: &str, chat: ChatId, line: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hearth-cli"))
        .args(["chat", "--model", model, "--db"])
        .arg(db)
        .args(["--chat", &chat.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{line}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().strip_suffix('\n').unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_and_the_cli_share_the_apps_rules() {
    // SAFETY: this binary's one test sets it before any engine starts.
    unsafe { std::env::set_var("HEARTH_ENGINE_HOST", env!("CARGO_BIN_EXE_hearth-cli")) };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("models")).unwrap();
    std::os::unix::fs::symlink(model_path(), data.join("models").join(DEFAULT_MODEL_FILE)).unwrap();
    let other = dir.path().join("other.gguf");
    std::fs::copy(model_path(), &other).unwrap();
    let other = other.display().to_string();

    // The model loaded in the model manager is the one loaded after a restart.
    let app = start(&data).await;
    assert!(app.models.loaded_path().unwrap().ends_with(DEFAULT_MODEL_FILE));
    app.models.load(&other, |_| {}).await.unwrap();
    quit(app).await;
    let app = start(&data).await;
    assert_eq!(app.models.loaded_path().as_deref(), Some(other.as_str()));

    // Settings at every scope; each chat's reply is as long as the scope it resolves to says.
    let settings = |temperature, seed, max_tokens| SamplingParams {
        temperature,
        seed: Some(seed),
        max_tokens,
        ignore_eos: true,
        ..SamplingParams::default()
    };
    app.settings.set_sampling(&SettingsScope::Global, &settings(0.9, 1, 12)).await.unwrap();
    app.settings.set_sampling(&SettingsScope::Model { path: other.clone() }, &settings(1.0, 42, 9)).await.unwrap();
    let mut cases = Vec::new(); // (chat answered by the app, its twin answered by the CLI, tokens)
    for own in [Some(settings(0.8, 7, 6)), None] {
        let pair = [app.store.create_chat().await.unwrap().id, app.store.create_chat().await.unwrap().id];
        if let Some(params) = &own {
            for chat in pair {
                app.settings.set_sampling(&SettingsScope::Chat { id: chat }, params).await.unwrap();
            }
        }
        cases.push((pair, own.map_or(9, |p| p.max_tokens)));
    }
    let line = "Name a fruit and say why you like it.";
    let mut app_replies = Vec::new();
    for ([chat, _], _) in &cases {
        let sampling = app.chat_sampling(*chat).await.unwrap();
        let reply = app.chat.send(*chat, line, sampling, |_| {}).await.unwrap();
        app_replies.push(reply);
    }
    let db = app.paths.database.clone();
    quit(app).await;

    for (([_, twin], tokens), app_reply) in cases.iter().zip(app_replies) {
        assert_eq!(app_reply.stats.as_ref().map(|s| s.completion_tokens), Some(*tokens), "{app_reply:?}");
        assert_eq!(cli_reply(&db, &other, *twin, line), app_reply.content, "chat {twin} ({tokens} tokens)");
    }

    // The chats' KV caches were kept on disk (by the app at quit, by the CLI beside the same
    // history); clearing them leaves none.
    let app = start(&data).await;
    let usage = app.chat_cache_usage().await.unwrap();
    assert!(usage.chats >= 2 && usage.budgets == CacheBudgets::default(), "{usage:?}");
    // Beside them, the model: its file, mapped, and its context's KV cache (SmolLM2: 30 layers ×
    // 3 KV heads × 64 × keys and values × 2 bytes = 23,040 bytes a token, in f16).
    let loaded = app.models.loaded().unwrap();
    assert_eq!(usage.model_bytes, std::fs::metadata(&loaded.path).unwrap().len());
    assert_eq!(usage.context_bytes, 23_040 * u64::from(loaded.n_ctx), "{usage:?}");

    // The user's budgets are saved and in force at once: no disk space, no state file.
    let none = CacheBudgets { ram_mb: 0, disk_mb: 0, ..CacheBudgets::default() };
    assert!(app.set_cache_budgets(CacheBudgets { ram_mb: u32::MAX, ..none }).await.is_err(), "refused, not saved");
    assert_eq!(app.set_cache_budgets(none).await.unwrap().budgets, none);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while app.chat_cache_usage().await.unwrap().chats > 0 {
        assert!(std::time::Instant::now() < deadline, "{:?}", app.chat_cache_usage().await);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    quit(app).await;
    let app = App::open(AppPaths::under(data.clone())).await.unwrap();
    let cleared = app.clear_chat_caches().await.unwrap();
    let nothing = hearth_app::ChatCacheUsage {
        bytes: 0,
        chats: 0,
        ram_bytes: 0,
        budgets: none,
        model_bytes: 0,
        context_bytes: 0,
        kept_model_bytes: 0,
    };
    assert_eq!(cleared, nothing, "no model loaded: nothing held");
    quit(app).await;
}

/// A provider's key goes only where it was given: moving the base URL to another host forgets
/// it, a new path on the same host keeps it, and plain HTTP to another machine needs a yes.
#[tokio::test]
async fn a_providers_key_stays_with_its_host() {
    use hearth_core::{ProviderConfig, ProviderKind};
    use hearth_providers::{KeySource, Secret};
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let app = App::open(AppPaths::under(dir.path().join("data"))).await.unwrap();
    let id = format!("moving-{}", std::process::id());
    let at = |url: &str| ProviderConfig { base_url: url.into(), ..ProviderConfig::new(&id, "Moving", ProviderKind::OpenAiCompatible) };

    assert!(!app.save_provider(at("https://llm.example.org/v1")).await.unwrap());
    app.keys.set(Secret::Provider(&id), "sk-moving-1234").unwrap();
    // (new base URL, the key is forgotten)
    for (url, forgotten) in [("https://llm.example.org/v2", false), ("https://elsewhere.example/v1", true)] {
        assert_eq!(app.save_provider(at(url)).await.unwrap(), forgotten, "{url}");
        assert_eq!(app.keys.key(&id).unwrap().is_none(), forgotten, "{url}");
        assert_eq!(app.providers.config(&id).unwrap().base_url, url);
    }

    let plain = at("http://192.168.1.20:8000/v1");
    let refused = app.save_provider(plain.clone()).await.unwrap_err();
    assert!(matches!(&refused, hearth_app::SettingsError::Invalid(e) if e.field == "allowPlainHttp"), "{refused:?}");
    assert!(app.save_provider(ProviderConfig { allow_plain_http: true, ..plain }).await.unwrap());
    app.keys.delete(Secret::Provider(&id)).unwrap();
}
