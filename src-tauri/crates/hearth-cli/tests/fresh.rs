//! `hearth-cli chat --fresh`: each line is a new conversation with the model still loaded, as New
//! chat is in the app (make bench-app compares the window with it). The same line twice is the
//! same prompt, and the second reuses the first's KV prefix.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn model_path() -> PathBuf {
    std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    })
}

/// (prompt tokens, cached tokens) from each turn's stats line.
fn turns(stderr: &str) -> Vec<(u32, u32)> {
    stderr
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix('[')?;
            let mut numbers = rest.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty());
            Some((numbers.next()?.parse().ok()?, numbers.next()?.parse().ok()?))
        })
        .collect()
}

#[test]
fn each_line_is_a_new_conversation_on_the_loaded_model() {
    let run = |fresh: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
        command.args(["chat", "--model"]).arg(model_path()).args(["--threads", "2", "--max-tokens", "4"]);
        if fresh {
            command.arg("--fresh");
        }
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        writeln!(child.stdin.take().unwrap(), "Name a colour.\nName a colour.").unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        turns(&String::from_utf8_lossy(&out.stderr))
    };
    let fresh = run(true);
    assert_eq!(fresh.len(), 2, "{fresh:?}");
    assert_eq!(fresh[0].0, fresh[1].0, "the same line is the same prompt in a new conversation");
    assert!(fresh[1].1 > 0 && fresh[1].1 < fresh[1].0, "the second reuses the first's prefix: {fresh:?}");
    let carried_on = run(false);
    assert!(carried_on[1].0 > carried_on[0].0, "without --fresh the second line carries the first turn: {carried_on:?}");
}
