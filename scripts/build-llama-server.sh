#!/usr/bin/env bash
# Builds llama.cpp's own OpenAI-compatible server (`llama-server`), the real peer Hearth is
# measured and tested against. The source is the llama.cpp that the PyPI sdist of
# llama-cpp-python vendors (crates.io's llama-cpp-sys-2 strips tools/server), pinned by sha256.
# Idempotent: prints the binary's path and does nothing when it is already built.
#
#   scripts/build-llama-server.sh              # → target/llama-server/bin/llama-server
#   scripts/build-llama-server.sh --sdist      # fetches the pinned sdist only; prints its path
#
# It is optimised as upstream releases it: `hearth-cli bench` measures Hearth against it. (The
# tests' peer, which only has to speak the wire format, is built cheaply from the engine's own
# llama.cpp by scripts/build-backend.sh tests.)
set -euo pipefail

VERSION="0.3.36"
SDIST="llama_cpp_python-$VERSION.tar.gz"
URL="https://files.pythonhosted.org/packages/ec/e9/e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/$SDIST"
SHA256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"

root=$(cd "$(dirname "$0")/.." && pwd)
# The pinned sdist in the download cache, fetched and checked when missing; prints its path.
fetch_sdist() {
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/hearth/sdists"
  mkdir -p "$cache"
  if [ ! -f "$cache/$SDIST" ] || [ "$(sha256sum "$cache/$SDIST" | cut -d' ' -f1)" != "$SHA256" ]; then
    echo "downloading $SDIST from PyPI (77 MB)…" >&2
    curl -fsSL --retry 3 -o "$cache/$SDIST.partial" "$URL"
    got=$(sha256sum "$cache/$SDIST.partial" | cut -d' ' -f1)
    if [ "$got" != "$SHA256" ]; then
      rm -f "$cache/$SDIST.partial"
      echo "error: $SDIST has sha256 $got, expected $SHA256" >&2
      exit 1
    fi
    mv "$cache/$SDIST.partial" "$cache/$SDIST"
  fi
  echo "$cache/$SDIST"
}
if [ "${1:-}" = --sdist ]; then
  fetch_sdist
  exit 0
fi

out="$root/target/llama-server"
bin="$out/bin/llama-server"
# ggml's portable CPU build (AVX2, FMA, F16C on x86), as llama-cpp-sys-2 builds Hearth's engine
# by default: the peer must differ from the engine in serving only, not in instruction set (a
# native build adds AVX-512 here, whose wider tiles make a batch of four ~10% faster).
CPU_FLAGS="-DGGML_NATIVE=OFF"
# What a build was made with, kept beside it: a build made otherwise is made again.
made_with="$CPU_FLAGS"
# One build at a time: a call made while another builds waits for it, then finds the binary built.
mkdir -p "$out"
exec 9>"$out/.lock"
flock -n 9 || { echo "waiting for the llama-server build under way ($out)…" >&2; flock 9; }
if [ -x "$bin" ] && [ "$(cat "$out/cpu-flags" 2>/dev/null)" = "$made_with" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$out"
fetch_sdist >/dev/null

src="$out/src"
rm -rf "$src"
mkdir -p "$src"
tar xzf "$cache/$SDIST" -C "$src" --strip-components=3 "llama_cpp_python-$VERSION/vendor/llama.cpp"

echo "building llama-server (a few minutes on 2 cores)…" >&2
cmake -S "$src" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF $CPU_FLAGS \
  -DCMAKE_PROJECT_INCLUDE="$root/scripts/llama-serving.cmake" -DHEARTH_SERVING_OPT= >&2
cmake --build "$out/build" --target llama-server -j "$(nproc)" >&2
mkdir -p "$out/bin"
cp "$out/build/bin/llama-server" "$bin.partial"
mv "$bin.partial" "$bin"
echo "$made_with" > "$out/cpu-flags"
rm -rf "$src" "$out/build"
echo "$bin"
