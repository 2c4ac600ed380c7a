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
# The tests' release key (packaging/test-update-key): the update test's packages are signed with it.
export HEARTH_UPDATE_PUBKEY="${HEARTH_UPDATE_PUBKEY:-$(cat packaging/test-update-key/hearth-test.key.pub)}"
cargo build --workspace --all-targets --features "${HEARTH_CARGO_FEATURES:-tauri/custom-protocol}"
export HEARTH_FAKE_PROVIDER="$PWD/target/debug/examples/fake_provider"
export HEARTH_FAKE_HUB="$PWD/target/debug/examples/fake_hub"
export HEARTH_LLAMA_SERVER="$PWD/target/llama-server-tests/bin/llama-server"
export HEARTH_APP_BINARY="$PWD/target/debug/hearth"
export HEARTH_TEST_MODEL="${HEARTH_TEST_MODEL:-$PWD/target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
# The install test's packages: this very build in a .deb (a few seconds; nothing compiles), and
# the update it finds: the same code with its version raised (the shell's library and binary built
# again, TAURI_CONFIG; not its tests, and with the features the workspace's build gave Tauri, so
# that nothing else compiles), bundled and signed with the tests' key. Everything after runs the
# raised build.
packages="$PWD/target/e2e-packages"
rm -rf "$packages" && mkdir -p "$packages"
cp "$(PROFILE=debug BUNDLE_ONLY=1 BUNDLES=deb scripts/package.sh | tail -n 1)" "$packages/hearth-current.deb"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
next="${version%.*}.$((${version##*.} + 1))"
TAURI_CONFIG="{\"version\":\"$next\"}" cargo build -p hearth --bin hearth --features "${HEARTH_CARGO_FEATURES:-tauri/custom-protocol} tauri/test"
next_deb=$(PROFILE=debug BUNDLE_ONLY=1 BUNDLES=deb scripts/package.sh --config "{\"version\":\"$next\"}" | tail -n 1)
cp "$next_deb" "$packages/hearth-next.deb"
TAURI_SIGNING_PRIVATE_KEY_PASSWORD="" scripts/tauri.sh signer sign -f packaging/test-update-key/hearth-test.key -p "" --app-version "$next" "$packages/hearth-next.deb" >/dev/null
export HEARTH_DEB="$packages/hearth-current.deb" HEARTH_NEXT_DEB="$packages/hearth-next.deb" HEARTH_NEXT_VERSION="$next"
# --test-force-exit: a process left holding a test file's stderr must not keep the run waiting
# (each driver's stop() ends its group and names what it had to end; this is the last guard).
# Arguments name test files to run alone (all of tests/e2e/ by default).
xvfb-run -a -s "-screen 0 1280x900x24" node --test --test-concurrency=1 --test-force-exit "${@:-tests/e2e/}"
