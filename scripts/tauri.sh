#!/usr/bin/env bash
# The Tauri CLI (from ui/node_modules) with this repository's layout: the app (tauri.conf.json,
# Cargo.toml) at the root, the frontend in ui/ (where before*Command run).
#   scripts/tauri.sh dev | scripts/tauri.sh build --debug --no-bundle | scripts/tauri.sh icon …
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export TAURI_APP_PATH="$root" TAURI_FRONTEND_PATH="$root/ui"
cd "$root"
exec ui/node_modules/.bin/tauri "$@"
