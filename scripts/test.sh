#!/usr/bin/env bash
# Runs every test. Expects scripts/setup.sh test to have run (make test does both).
set -euo pipefail
cd "$(dirname "$0")/.."
export HEARTH_TEST_MODEL="$PWD/target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf"

step() { printf '\n==> %s\n' "$*"; }

step "UI: type check, unit tests, chat screen in Chromium (IPC mocked)"
npm --prefix ui test

step "Rust: every crate and the app on Tauri's mock runtime (real model, real SQLite)"
cargo test --workspace --all-targets

step "End to end: the real app in a WebKit webview, driven by tauri-driver under Xvfb"
scripts/e2e.sh
