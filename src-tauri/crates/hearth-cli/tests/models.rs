//! `hearth-cli models …` against the local fake hub (real HTTP) and real files.

use std::path::{Path, PathBuf};
use std::process::Command;

use hearth_testkit::fake_hub::{FakeFile, FakeHub, FakeRepo, start};

fn model_path() -> PathBuf {
    std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    })
}

fn cli(env: &[(&str, &Path)], hub: &str, args: &[&str]) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
    command.arg("models").args(args).env("HF_ENDPOINT", hub).env_remove("HF_TOKEN");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_pull_list_and_inspect() {
    let bytes = std::fs::read(model_path()).unwrap();
    let repo = FakeRepo {
        id: "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF".into(),
        gated: false,
        downloads: 4_321,
        likes: 12,
        files: vec![FakeFile::new("SmolLM2-135M-Instruct.Q4_1.gguf", bytes.clone())],
    };
    let (url, _fake) = start(FakeHub::new(vec![repo])).await;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("hf");
    let data = dir.path().join("data");
    let env = [("HF_HUB_CACHE", cache.as_path()), ("HEARTH_DATA_DIR", data.as_path())];

    let (ok, out, _) = tokio::task::spawn_blocking({
        let url = url.clone();
        let env = env.map(|(k, v)| (k, v.to_path_buf()));
        move || cli(&env.iter().map(|(k, v)| (*k, v.as_path())).collect::<Vec<_>>(), &url, &["search", "smollm2"])
    })
    .await
    .unwrap();
    assert!(ok && out.contains("HuggingFaceTB/SmolLM2-135M-Instruct-GGUF\t4321 downloads\t12 likes"), "{out}");

    let (ok, out, err) = tokio::task::spawn_blocking({
        let url = url.clone();
        let env = env.map(|(k, v)| (k, v.to_path_buf()));
        move || {
            cli(
                &env.iter().map(|(k, v)| (*k, v.as_path())).collect::<Vec<_>>(),
                &url,
                &["pull", "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF", "SmolLM2-135M-Instruct.Q4_1.gguf"],
            )
        }
    })
    .await
    .unwrap();
    assert!(ok, "{err}");
    assert!(err.contains("100%") && err.contains("[##############################]"), "{err}");
    let pulled = PathBuf::from(out.trim());
    assert!(pulled.starts_with(&cache) && std::fs::read(&pulled).unwrap() == bytes, "{out}");

    let (ok, out, _) = cli(&env, &url, &["list"]);
    assert!(ok && out.contains("SmolLM2-135M-Instruct.Q4_1\t") && out.contains("HubCache\tllama 134M Q4_1 ctx 8192"), "{out}");

    let (ok, out, _) = cli(&env, &url, &["inspect", pulled.to_str().unwrap()]);
    assert!(ok, "{out}");
    for line in ["architecture:   llama", "quantization:   Q4_1", "context length: 8192", "layers:         30", "chat template:  yes"] {
        assert!(out.contains(line), "{line}: {out}");
    }

    let (ok, _, err) = cli(&env, &url, &["pull", "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF", "nope.gguf"]);
    assert!(!ok && err.contains("has no GGUF file nope.gguf; it has: SmolLM2-135M-Instruct.Q4_1.gguf"), "{err}");
}

/// Bad files: a clear error and exit status 1, never a crash.
#[test]
fn inspect_refuses_bad_files_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read(model_path()).unwrap();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("text.gguf", b"hello, I am not a model".to_vec(), "is not a GGUF model file"),
        ("cut.gguf", real[..real.len() / 3].to_vec(), "is truncated"),
        ("v9.gguf", [&real[..4], &9u32.to_le_bytes(), &real[8..4096]].concat(), "uses GGUF version 9"),
        ("empty.gguf", Vec::new(), "is not a GGUF model file"),
    ];
    for (name, bytes, words) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let (ok, _, err) = cli(&[], "http://127.0.0.1:9", &["inspect", path.to_str().unwrap()]);
        assert!(!ok && err.starts_with("error: ") && err.contains(words), "{name}: {err}");
    }
    let (ok, _, err) = cli(&[], "http://127.0.0.1:9", &["inspect", "/no/such/model.gguf"]);
    assert!(!ok && err.contains("/no/such/model.gguf cannot be read"), "{err}");
}
