//! `hearth-cli bench` when part of it fails: the failed section is named in the JSON with what
//! failed (the server, its last lines of output), the other sections still report their figures,
//! `--compare` judges what was measured, and the exit status says something went wrong.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

fn model_path() -> PathBuf {
    std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    })
}

#[test]
fn a_failed_section_is_reported_and_the_others_still_measured_and_compared() {
    let dir = tempfile::tempdir().unwrap();
    // A llama-server that cannot start, as a broken build says so on stderr.
    let server = dir.path().join("llama-server");
    std::fs::write(&server, "#!/bin/sh\necho 'loading model' \necho 'error: cannot open the model (the last words)' >&2\nexit 1\n")
        .unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Recorded figures: one this run misses (its `threads` stands in for a ratio), one of the
    // failed server's, one that holds.
    let baseline = dir.path().join("baseline.json");
    let figures = json!({ "figures": {
        "threads": { "value": 4, "better": "higher", "noise": 0.1 },
        "ttft_vs_cached_server_median": { "value": 1.0, "better": "lower", "noise": 0.1 },
        "server_cache_ram_switch_ttft_ratio": { "value": 1.0, "better": "lower", "noise": 0.1 }
    }});
    std::fs::write(&baseline, figures.to_string()).unwrap();

    // The conversation (one turn) goes on without the server; the switch-server section is lost.
    let out = Command::new(env!("CARGO_BIN_EXE_hearth-cli"))
        .args(["bench", "--model"])
        .arg(model_path())
        .args(["--threads", "2", "--turns", "1", "--json", "--sections", "conversation,switch-server", "--server"])
        .arg(&server)
        .arg("--compare")
        .arg(&baseline)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a failed section fails the run: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("no whole JSON report ({e}): {stderr}"));

    let reuse = report["ttft_ms_reuse"].as_array().unwrap();
    assert!(reuse.len() == 1 && reuse[0].as_f64().unwrap() > 0.0, "the engine's figures stay: {report}");
    assert!(report["server"].is_null(), "no figures of the server that failed: {report}");
    assert!(report.get("server_switch_hot_ttft_ms").is_none(), "no figure of the failed section");
    let failed = report["failed_sections"].as_array().unwrap();
    let sections: Vec<&str> = failed.iter().filter_map(|f| f["section"].as_str()).collect();
    assert_eq!(sections, ["conversation", "switch-server"]);
    for failure in failed {
        assert!(failure["server"].as_str().unwrap().starts_with("llama-server (1 slot"), "{failure}");
        let error = failure["error"].as_str().unwrap();
        assert!(error.contains("ended before it was ready") && error.contains("has exited"), "{error}");
        let log: Vec<&str> = failure["server_log"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(log.contains(&"error: cannot open the model (the last words)") && log.contains(&"loading model"), "{log:?}");
    }

    let check = &report["check"];
    assert_eq!(check["regressed"], json!(["threads"]), "{check}");
    assert_eq!(check["not_measured"], json!(["server_cache_ram_switch_ttft_ratio", "ttft_vs_cached_server_median"]), "{check}");
    assert!(
        stderr.contains("2 section(s) failed: conversation, switch-server") && stderr.contains("1 figure(s) regressed: threads"),
        "{stderr}"
    );
}
