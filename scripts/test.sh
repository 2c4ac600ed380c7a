#!/usr/bin/env bash
# Runs every test. Expects scripts/setup.sh test to have run (make test does both).
set -euo pipefail
cd "$(dirname "$0")/.."

# API keys live in the OS keychain: run everything inside a D-Bus session with an unlocked GNOME
# Keyring (the Secret Service), as a desktop session has.
if [ -z "${HEARTH_KEYRING_SESSION:-}" ]; then
  exec env HEARTH_KEYRING_SESSION=1 dbus-run-session -- "$PWD/scripts/test.sh" "$@"
fi
# Its keyrings live in a fresh folder: a login keyring left by another session (another password)
# would stay locked.
keyring_home=$(mktemp -d)
trap 'rm -rf "$keyring_home"' EXIT
printf 'hearth-test' | XDG_DATA_HOME="$keyring_home" gnome-keyring-daemon --unlock --components=secrets >/dev/null
export HEARTH_TEST_MODEL="$PWD/target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf"
export HEARTH_TEST_PYTHON="$PWD/target/openai-venv/bin/python"

step() { printf '\n==> %s\n' "$*"; }

step "Rust: formatting (rustfmt.toml)"
cargo fmt --all --check

step "UI: type check, unit tests, chat screen in Chromium (IPC mocked)"
npm --prefix ui test

step "Rust: every crate and the app on Tauri's mock runtime (real model, real SQLite)"
cargo test --workspace --all-targets

step "Rust: lints, every crate and target, warnings are errors"
cargo clippy --workspace --all-targets -- -D warnings

step "End to end: the real app in a WebKit webview, driven by tauri-driver under Xvfb"
scripts/e2e.sh
