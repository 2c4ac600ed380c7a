#!/usr/bin/env bash
# Builds the real app (custom protocol, UI embedded) and drives it through tauri-driver +
# WebKitWebDriver under Xvfb. Screenshots land in tests/e2e/output/.
set -euo pipefail
cd "$(dirname "$0")/.."
# The app with its UI embedded (Tauri's custom protocol, as `tauri build` builds it), and the
# provider tests' peers: the fake API and the model manager's fake Hugging Face hub (examples);
# llama.cpp's server (its tests' build) by scripts/setup.sh test. The same features and targets as
# scripts/test.sh's build, which has ui/dist built too (HEARTH_UI_BUILT): there this builds nothing.
[ -n "${HEARTH_UI_BUILT:-}" ] || npm --prefix ui run build
cargo build --workspace --all-targets --features "${HEARTH_CARGO_FEATURES:-tauri/custom-protocol}"
export HEARTH_FAKE_PROVIDER="$PWD/target/debug/examples/fake_provider"
export HEARTH_FAKE_HUB="$PWD/target/debug/examples/fake_hub"
export HEARTH_LLAMA_SERVER="$PWD/target/llama-server-tests/bin/llama-server"
export HEARTH_APP_BINARY="$PWD/target/debug/hearth"
export HEARTH_TEST_MODEL="${HEARTH_TEST_MODEL:-$PWD/target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
# The install test's package: this very build in a .deb (a few seconds; nothing compiles).
HEARTH_DEB=$(PROFILE=debug BUNDLE_ONLY=1 BUNDLES=deb scripts/package.sh | tail -n 1)
export HEARTH_DEB
# --test-force-exit: a process left holding a test file's stderr must not keep the run waiting
# (each driver's stop() ends its group and names what it had to end; this is the last guard).
xvfb-run -a -s "-screen 0 1280x900x24" node --test --test-concurrency=1 --test-force-exit tests/e2e/
