//! `hearth-cli` with hostile model files and a crashing engine: words and an exit status, never
//! an abort; a reply the engine died under does not end the conversation.

use hearth_testkit::gguf;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn model_path() -> PathBuf {
    std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    })
}

/// Runs `hearth-cli` with `stdin`; returns (exit code, stdout, stderr).
fn cli(args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hearth-cli"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn hostile_files_exit_in_words() {
    let real = std::fs::read(model_path()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("nested.gguf", gguf::with_kv(&real, "x.nested", gguf::ARRAY, &gguf::nested_arrays(100_000)), "x.nested is an array of arrays"),
        (
            "arch.gguf",
            gguf::with_kv(&real, "general.architecture", gguf::STRING, &gguf::string("hearthtest")),
            "unknown model architecture: 'hearthtest'",
        ),
    ];
    for (name, bytes, words) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let path = path.to_str().unwrap();
        let (code, _, err) = cli(&["chat", "--model", path, "--temp", "0", "--ctx", "512"], "Hi\n");
        assert_eq!(code, Some(1), "{name}: {err}");
        assert!(err.contains(words), "{name}: {err}");
    }
    // A file without a chat template: inspect says what Hearth does about it.
    let bare = dir.path().join("bare.gguf");
    std::fs::write(&bare, gguf::without_kv(&real, "tokenizer.chat_template")).unwrap();
    let (code, out, _) = cli(&["models", "inspect", bare.to_str().unwrap()], "");
    assert_eq!(code, Some(0));
    assert!(out.contains("chat template:  no chat template — using ChatML; choose one in the Model settings"), "{out}");
    // The header check alone says it too.
    let (code, _, err) = cli(&["models", "inspect", dir.path().join("nested.gguf").to_str().unwrap()], "");
    assert_eq!(code, Some(1));
    assert!(err.contains("is an array of arrays"), "{err}");
}

#[test]
fn a_template_that_loops_forever_fails_one_reply_in_words() {
    let real = std::fs::read(model_path()).unwrap();
    let forever = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forever.gguf");
    std::fs::write(&path, gguf::with_kv(&real, "tokenizer.chat_template", gguf::STRING, &gguf::string(forever))).unwrap();
    let (code, _, err) = cli(&["chat", "--model", path.to_str().unwrap(), "--temp", "0", "--ctx", "512"], "Hi\nHello\n");
    assert_eq!(code, Some(1), "{err}");
    // Both lines were tried: the first failure did not end the conversation.
    assert_eq!(err.matches("it ran too long (it may loop forever)").count(), 2, "{err}");
    assert!(err.contains("2 replies failed"), "{err}");
}
