#!/usr/bin/env bash
# make bench-app: the speed a user sees. Builds the app as `make run` does and hearth-cli with the
# same engine build, then drives the real window under Xvfb against the engine alone
# (bench/app.mjs). Prints one JSON object last. Expects scripts/setup.sh test to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${HEARTH_BENCH_SESSION:-}" ]; then
  exec env HEARTH_BENCH_SESSION=1 dbus-run-session -- "$PWD/scripts/bench-app.sh" "$@"
fi
scripts/tauri.sh build --no-bundle >&2
# The reference engine and the fake provider optimised too: the provider stands for a server
# elsewhere, and unoptimised it took ~6 % of a core from the engine beside the window.
cargo build --release -p hearth-cli >&2
cargo build --release -p hearth-testkit --example fake_provider >&2
# The bench types as a keyboard does, through X (bench/xkeys.py).
export HEARTH_TEST_PYTHON="$PWD/target/openai-venv/bin/python"
"$HEARTH_TEST_PYTHON" -c 'import Xlib' 2>/dev/null ||
  "$HEARTH_TEST_PYTHON" -m pip install --quiet --disable-pip-version-check python-xlib==0.33 >&2
export HEARTH_FAKE_PROVIDER="$PWD/target/release/examples/fake_provider"
export HEARTH_APP_BINARY="$PWD/target/release/hearth"
export HEARTH_CLI_BINARY="$PWD/target/release/hearth-cli"
export HEARTH_TEST_MODEL="${HEARTH_TEST_MODEL:-$PWD/target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
xvfb-run -a -s "-screen 0 1280x900x24" node bench/app.mjs
