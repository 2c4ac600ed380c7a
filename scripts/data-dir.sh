#!/usr/bin/env bash
# Prints Hearth's data dir, the same one the app uses: $HEARTH_DATA_DIR, else the XDG data dir
# of the app's identifier (Tauri's app_data_dir on Linux).
set -euo pipefail
IDENTIFIER="dev.hearth.desktop"
echo "${HEARTH_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/$IDENTIFIER}"
