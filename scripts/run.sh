#!/usr/bin/env bash
# Builds Hearth (the UI is bundled into the binary) and launches it. Optimised, as it ships: in a
# debug build the app's own streaming path (reqwest, serde_json, tokio, the IPC) took twice the CPU
# beside the engine (docs/benchmarks.md); `make test` keeps its debug build apart (target/debug).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/tauri.sh build --no-bundle
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "No display found. Hearth is a desktop app: run it in a desktop session, or headless with" >&2
  echo "  xvfb-run -a make run" >&2
  exit 1
fi
exec target/release/hearth
