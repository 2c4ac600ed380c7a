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
# A hang anywhere must say what hung rather than wait out CI's limit (90 minutes): after 80
# minutes (a run takes 45-60 on a busy 2-core machine) the process tree is printed and the run ends. Its sleep holds none of the
# output pipes, so a run that ends leaves nothing behind that a reader would wait for.
watchdog() {
  sleep 4800 </dev/null >/dev/null 2>&1 &
  local sleeper=$!
  trap 'kill "$sleeper"; exit 0' TERM
  wait "$sleeper"
  printf '\n==> still running after 80 minutes; the processes:\n'
  ps -eo pid,ppid,pgid,etime,stat,wchan:24,args --forest | cut -c1-220
  kill -TERM 0
}
watchdog &
watchdog_pid=$!
# The Rust build runs in the background beside the UI's tests (below): a failed step ends it too.
rust_build=""
trap 'kill "$watchdog_pid" 2>/dev/null; [ -z "$rust_build" ] || kill -- -"$rust_build" 2>/dev/null; rm -rf "$keyring_home"' EXIT
printf 'hearth-test' | XDG_DATA_HOME="$keyring_home" gnome-keyring-daemon --unlock --components=secrets >/dev/null
# The daemon claims the Secret Service's name on the bus after it returns: until it has, a test's
# call would have D-Bus start another keyring (activation), and a call beside that one fails.
for _ in $(seq 100); do
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true' && break
  sleep 0.1
done
export HEARTH_TEST_MODEL="$PWD/target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf"
export HEARTH_TEST_PYTHON="$PWD/target/openai-venv/bin/python"

# Each step says how long it took: `make test` must stay well under CI's time on a 2-core machine.
step_name=""
step() {
  [ -n "$step_name" ] && printf '    (%s: %d s; %d s in all)\n' "$step_name" "$((SECONDS - step_started))" "$SECONDS"
  step_name=${1:-}
  step_started=$SECONDS
  if [ -n "$step_name" ]; then printf '\n==> %s\n' "$step_name"; fi
}

step "Rust: formatting (rustfmt.toml)"
cargo fmt --all --check

# One build serves the Rust tests, the lints and the end-to-end app. clippy-driver compiles the
# workspace's own crates, so its lints (warnings are errors, as `cargo clippy --workspace
# --all-targets -- -D warnings`) gate this very build instead of a second, check-only pass over
# every dependency; with the custom protocol the app embeds ui/dist, so scripts/e2e.sh finds it
# built. Dependencies are compiled by rustc as before.
# One fresh build, not an edit loop: incremental compilation's bookkeeping cost the workspace's
# own crates ~40% more CPU (hearth-core: 8.8 s against 5.5). Every cargo call below shares the
# setting (it is part of cargo's fingerprint); CARGO_INCREMENTAL=1 make test keeps it.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
clippy_driver=$(command -v clippy-driver || echo "$(rustc --print sysroot)/bin/clippy-driver")
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
export HEARTH_CARGO_FEATURES="tauri/custom-protocol"
# The build trusts the tests' release key (packaging/test-update-key), as the update tests need.
export HEARTH_UPDATE_PUBKEY="$(cat packaging/test-update-key/hearth-test.key.pub)"

step "UI: production build (the app below embeds it)"
npm --prefix ui run build

# llama.cpp's `common` library, of which the engine uses one function, compiles at -O0 in one
# unit; llama and ggml-base at -O1, ggml-cpu, where the tests' compute runs, at -O3
# (scripts/llama-serving.cmake).
export CMAKE_PROJECT_INCLUDE="$PWD/scripts/llama-serving.cmake" HEARTH_SERVING_OPT=-O0 HEARTH_LLAMA_OPT=-O1

# The Rust build runs beside the UI's checks and tests, which leave most of a core idle (Chromium
# waits on the page as often as it works). In a session of its own it is a group of its own
# where the kernel groups the CPU by session (sched_autogroup): the two then share the CPU half
# and half, and the tests' llama.cpp programs (scripts/setup.sh) take only what both leave idle.
# Elsewhere nice 19 puts it behind the UI's tests until they are done: at nice 5 a unit test
# that times its own work failed. Its output is shown once the UI's tests are done; its timings
# in target/cargo-timings/.
rust_build_log=$(mktemp)
setsid nice -n 19 cargo test --workspace --all-targets --features "$HEARTH_CARGO_FEATURES" --no-run --timings >"$rust_build_log" 2>&1 &
rust_build=$!
rust_build_started=$SECONDS

step "UI: type check, unit tests, chat screen in Chromium (IPC mocked), beside the Rust build"
npm --prefix ui run check
npm --prefix ui run test:unit
npm --prefix ui run test:browser:built

step "Rust: build every crate, target and the app, clippy's lints as errors (the rest of it)"
# Back to normal priority, ahead of the llama-server build (lowering a nice value needs root;
# elsewhere the two share the CPU).
renice -n 0 -g "$rust_build" >/dev/null 2>&1 || true
rust_build_status=0
wait "$rust_build" || rust_build_status=$?
rust_build=""
cat "$rust_build_log"
rm -f "$rust_build_log"
echo "(the build took $((SECONDS - rust_build_started)) s in all)"
[ "$rust_build_status" = 0 ] || exit "$rust_build_status"

# The tests' llama.cpp programs (scripts/setup.sh started their build): the GPU tests' Vulkan
# module, the RPC tests' module and rpc-server, and llama-server, the provider tests' peer; each
# in a folder of its own beside a link to this build's CPU module, so that only the tests that
# name a folder load what it holds. Their build takes only what the rest leaves idle (the Rust
# tests and the end-to-end ones leave a third of the CPU), so the tests that need them run last:
# the first pass below has them return at once (HEARTH_TEST_LLAMA_PROGRAMS=later), the last runs
# them by name and waits for the build if it is still under way (hearth-testkit's llama_programs).
export HEARTH_TEST_VULKAN_MODULES="$PWD/target/ggml-backends-vulkan" HEARTH_TEST_RPC_MODULES="$PWD/target/ggml-backends-rpc"
llama_program_tests=(--test vulkan --test rpc --test peer)

step "Rust: every crate and the app on Tauri's mock runtime (real model, real SQLite)"
HEARTH_TEST_LLAMA_PROGRAMS=later cargo test --workspace --all-targets --features "$HEARTH_CARGO_FEATURES"

step "End to end: the real app in a WebKit webview, driven by tauri-driver under Xvfb"
# The provider test, whose peer is the programs' llama-server (it waits for their build), last.
e2e_files=()
for file in tests/e2e/*.test.mjs; do [ "$file" = tests/e2e/providers.test.mjs ] || e2e_files+=("$file"); done
HEARTH_UI_BUILT=1 scripts/e2e.sh "${e2e_files[@]}" tests/e2e/providers.test.mjs

step "Rust: beside llama.cpp's programs (Vulkan on lavapipe, RPC, llama-server as a peer)"
scripts/build-backend.sh tests >/dev/null # built by now; or builds them, if the background build failed
cargo test --workspace --features "$HEARTH_CARGO_FEATURES" "${llama_program_tests[@]}"
step
