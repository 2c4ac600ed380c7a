#!/usr/bin/env bash
# Assembles the llama.cpp source that Hearth's engine is built from, with llama.cpp's own server
# and rpc-server beside it, into one tree: the GPU backends Hearth loads at run time must be
# built from the very ggml its libggml-base was (their interface is not stable across versions),
# and llama-server measured against it is then the same llama.cpp.
#
#   scripts/llama-source.sh DIR     # → DIR/llama.cpp (CMake project) ; prints DIR/llama.cpp
#
# ggml, llama and common come from the crates.io llama-cpp-sys-2 that Cargo.lock pins; that
# crate strips the server, its web UI and rpc-server, which come (with the multimodal library
# the server is written against) from the llama-cpp-python sdist
# scripts/build-llama-server.sh pins (a slightly older llama.cpp whose server compiles against
# this one; scripts/gpu-check.sh builds both).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$1/llama.cpp"

sys_version=$(sed -n '/^name = "llama-cpp-sys-2"/{n;s/version = "\(.*\)"/\1/p}' "$root/Cargo.lock")
sys=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"llama-cpp-sys-2-$sys_version"/llama.cpp 2>/dev/null | head -1)
if [ -z "$sys" ]; then
  (cd "$root" && cargo fetch --quiet)
  sys=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"llama-cpp-sys-2-$sys_version"/llama.cpp | head -1)
fi
sdist=$("$root/scripts/build-llama-server.sh" --sdist)

rm -rf "$dest"
mkdir -p "$dest/tools"
# What a backend, the server and rpc-server need; ggml's other backends stay behind (they are
# added only when their option is on).
for d in CMakeLists.txt LICENSE cmake common include src vendor; do cp -r "$sys/$d" "$dest/"; done
mkdir -p "$dest/ggml/src"
cp -r "$sys/ggml/CMakeLists.txt" "$sys/ggml/cmake" "$sys/ggml/include" "$dest/ggml/"
find "$sys/ggml/src" -maxdepth 1 -type f -exec cp {} "$dest/ggml/src/" \;
for b in ggml-cpu ggml-cuda ggml-vulkan ggml-rpc ggml-blas; do cp -r "$sys/ggml/src/$b" "$dest/ggml/src/"; done
tar xzf "$sdist" -C "$dest/tools" --strip-components=4 \
  "$(basename "$sdist" .tar.gz)/vendor/llama.cpp/tools/server" \
  "$(basename "$sdist" .tar.gz)/vendor/llama.cpp/tools/ui" \
  "$(basename "$sdist" .tar.gz)/vendor/llama.cpp/tools/rpc" \
  "$(basename "$sdist" .tar.gz)/vendor/llama.cpp/tools/mtmd"
mkdir -p "$dest/scripts"
tar xzf "$sdist" -C "$dest/scripts" --strip-components=4 "$(basename "$sdist" .tar.gz)/vendor/llama.cpp/scripts/ui-assets.cmake"
# The server reads files through a helper this common does not have yet (UTF-8 paths on Windows).
if ! grep -q fs_open_ifstream "$dest/common/common.h"; then
  sed -i '1i #include <fstream>\n#include <string>\nstatic std::ifstream fs_open_ifstream(const std::string & f, std::ios_base::openmode m) { return std::ifstream(f, m); }' \
    "$dest/tools/server/server-mcp.cpp"
fi
rm -rf "$dest/tools/server/tests" "$dest/tools/server/bench" "$dest/tools/ui/node_modules"
cat >"$dest/tools/CMakeLists.txt" <<'CMAKE'
# Hearth's peers only (scripts/llama-source.sh).
find_package(Threads REQUIRED)
llama_add_compile_flags()
add_subdirectory(mtmd)
if (LLAMA_BUILD_SERVER)
    add_subdirectory(ui)
    add_subdirectory(server)
endif()
if (GGML_RPC)
    add_subdirectory(rpc)
endif()
CMAKE
echo "$dest"
