//! `hearth-cli chat --provider …` against a local server speaking OpenAI's and Anthropic's wire
//! formats: replies stream to stdout, the key comes from the environment, a chat saved with
//! `--db` records its provider and model, and a missing key is an error in words.

use hearth_testkit::fake_provider as fake;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use hearth_core::{HistoryStore, ModelTarget};

/// Runs the CLI with `args`, one `input` line, and the given environment.
fn cli(args: &[&str], input: &str, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
    command.arg("chat").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for var in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HEARTH_API_KEY"] {
        command.env_remove(var);
    }
    // No keychain: a key can only come from the environment here.
    command.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/hearth-test-bus");
    let data = tempfile::tempdir().unwrap();
    command.env("HEARTH_DATA_DIR", data.path());
    command.envs(env.iter().copied());
    let mut child = command.spawn().expect("hearth-cli starts");
    writeln!(child.stdin.take().unwrap(), "{input}").unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn remote_chats_can_be_scripted() {
    let (url, record) = fake::start().await;
    for (provider, env_var) in [("openai-compatible", "HEARTH_API_KEY"), ("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")] {
        let output = cli(
            &["--provider", provider, "--base-url", &url, "--model", "echo", "--system", "Be brief."],
            "hello from a script",
            &[(env_var, fake::GOOD_KEY)],
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{provider}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "You said: hello from a script", "{provider}");
        assert!(stderr.contains("prompt tokens"), "{provider}: the stats line: {stderr}");
    }
    let system_first = record.requests.lock().unwrap()[0]["messages"][0].clone();
    assert_eq!(system_first["role"], "system");

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hearth.db");
    let saved = cli(
        &["--provider", "openai-compatible", "--base-url", &url, "--model", "echo", "--db", db.to_str().unwrap()],
        "keep this",
        &[("HEARTH_API_KEY", fake::GOOD_KEY)],
    );
    assert!(saved.status.success(), "{}", String::from_utf8_lossy(&saved.stderr));
    let store = hearth_store::Store::open(&db).await.unwrap();
    let chat = store.list_chats().await.unwrap()[0].clone();
    assert_eq!(chat.model, ModelTarget::Remote { provider: "openai-compatible".into(), model: "echo".into() });
    let messages = store.messages(chat.id).await.unwrap();
    assert_eq!(messages[1].model.as_deref(), Some("echo (OpenAI-compatible server)"));

    let no_key = cli(&["--provider", "openai", "--base-url", &url, "--model", "echo"], "hi", &[]);
    assert!(!no_key.status.success());
    let stderr = String::from_utf8_lossy(&no_key.stderr);
    assert!(stderr.contains("OpenAI needs an API key"), "{stderr}");

    let wrong = cli(&["--provider", "anthropic", "--base-url", &url, "--model", "echo"], "hi", &[("ANTHROPIC_API_KEY", "sk-nope-1234")]);
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(!wrong.status.success() && stderr.contains("refused the API key (401)"), "{stderr}");
    assert!(!stderr.contains("sk-nope-1234"), "the key is never printed: {stderr}");
}
