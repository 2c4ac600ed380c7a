#!/usr/bin/env bash
# Builds Hearth (the UI is bundled into the binary) and launches it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/tauri.sh build --debug --no-bundle
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "No display found. Hearth is a desktop app: run it in a desktop session, or headless with" >&2
  echo "  xvfb-run -a make run" >&2
  exit 1
fi
exec target/debug/hearth
