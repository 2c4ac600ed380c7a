#!/usr/bin/env bash
# Builds one of llama.cpp's GPU backends as a module Hearth loads at run time, from the very
# llama.cpp source Hearth's engine is built from (a module must match the ggml it is loaded
# into), and puts it beside the CPU's: Hearth finds it there and offloads to the GPU it serves.
#
#   scripts/build-backend.sh vulkan [DIR]   # → DIR/libggml-vulkan.so (default target/ggml-backends)
#   scripts/build-backend.sh cuda [DIR]     # → DIR/libggml-cuda.so (needs CUDA's nvcc)
#   scripts/build-backend.sh rpc [DIR]        # → DIR/libggml-rpc.so
#   scripts/build-backend.sh rpc-server [DIR] # → DIR/rpc-server/ggml-rpc-server (default target)
#   scripts/build-backend.sh tests            # → the tests' llama.cpp programs, in target/ (below)
#
# RPC: Hearth reaches the devices of other machines through its module, each machine running
# llama.cpp's rpc-server: the one built here, its CPU backend beside it (add a GPU's module to its
# folder: `scripts/build-backend.sh cuda DIR/rpc-server`). Client and server must speak the same
# RPC protocol: build both from this source. Start it as
# `target/rpc-server/ggml-rpc-server -H 0.0.0.0 -p 50052` (it trusts whoever reaches it: a private
# network only) and name host:50052 in the model's load settings.
#
# Vulkan needs glslc, the Vulkan headers and SPIR-V headers (Debian: glslc libvulkan-dev
# spirv-headers); it runs on any vendor's driver and on Mesa's software lavapipe (the tests'
# GPU: mesa-vulkan-drivers). Idempotent: a module built from the same source is kept.
# `tests` builds, from one CMake build (ggml compiled once; ~18 CPU-minutes, glslc's ~1,100
# shaders near a third of them), what `make test` runs beside Hearth: the Vulkan module the GPU tests load onto lavapipe
# (target/ggml-backends-vulkan), the RPC module and rpc-server the RPC tests use on loopback
# (target/ggml-backends-rpc), and llama-server, the provider tests' OpenAI-compatible peer
# (target/llama-server-tests/bin), its serving code at -O0. None of them has a CPU module of its
# own: each folder links to the one Cargo builds for Hearth's engine (target/ggml-backends), so
# the peers compute as the engine does. It compiles at -O0: the Vulkan tests' work runs in
# lavapipe's shaders, the peers' in that CPU module, and -O1 took a fifth more of the CPU.
# BACKEND_OPT=N compiles the host code at -ON (default -O3; -O0 for `tests`). Either way,
# vulkan-shaders-gen, which only runs glslc, compiles at -O0 (-O3 took a minute of CPU).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
backend="${1:?usage: scripts/build-backend.sh vulkan|cuda|rpc|rpc-server|tests [DIR]}"
dest="${2:-$root/target/ggml-backends}"
tools=OFF server=OFF
case "$backend" in
  vulkan) flags=(-DGGML_VULKAN=ON) ;;
  cuda) flags=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-native}") ;;
  rpc) flags=(-DGGML_RPC=ON) ;;
  # One of llama.cpp's tools, which need its common library configured.
  rpc-server) flags=(-DGGML_RPC=ON) tools=ON dest="${2:-$root/target}" ;;
  tests) flags=(-DGGML_VULKAN=ON -DGGML_RPC=ON -DGGML_CPU=OFF -DHEARTH_SERVING_OPT=-O0) tools=ON server=ON dest="$root/target" ;;
  *) echo "error: unknown backend $backend (vulkan, cuda, rpc, rpc-server or tests)" >&2; exit 2 ;;
esac
module="$dest/libggml-$backend.so"
[ "$backend" = rpc-server ] && module="$dest/rpc-server/ggml-rpc-server"
[ "$backend" = tests ] && module="$dest/llama-server-tests/bin/llama-server"
work="$root/target/backend-build/$backend"
mkdir -p "$work" "$dest"
exec 9>"$work/.lock"
flock 9

# What the module is built from: the sources' own list of files and their sizes and times.
src="$work/src"
"$root/scripts/llama-source.sh" "$work/new-src" >/dev/null
opt="${BACKEND_OPT:-3}"
[ "$backend" = tests ] && opt="${BACKEND_OPT:-0}"
made_from=$(cd "$work/new-src/llama.cpp" && { find . -type f -printf '%p %s\n' | sort; echo "-O$opt ${flags[*]} rpath 2"; } | sha256sum | cut -d' ' -f1)
if [ -f "$module" ] && [ "$(cat "$work/made-from" 2>/dev/null)" = "$made_from $backend" ]; then
  rm -rf "$work/new-src"
  echo "$module"
  exit 0
fi
rm -rf "$src" && mv "$work/new-src" "$src"
if [ "$backend" = vulkan ] || [ "$backend" = tests ]; then
  # Debian 12's Vulkan headers (1.3.239) predate VK_EXT_layer_settings, which ggml chains into
  # its instance only to configure the validation layer (off unless asked for): without the
  # extension in the headers, the instance is made without that chain.
  python3 - "$src/llama.cpp/ggml/src/ggml-vulkan/ggml-vulkan.cpp" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
start = "    std::vector<vk::LayerSettingEXT> settings = {"
made = "    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, extensions, &layer_setting_info);\n"
if start in text and made in text and "#if defined(VK_EXT_layer_settings)" not in text:
    text = text.replace(start, "#if defined(VK_EXT_layer_settings)\n" + start, 1)
    text = text.replace(made, made + "#else\n    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, extensions);\n#endif\n", 1)
    open(path, "w").write(text)
PY
  # vulkan-shaders-gen only runs glslc: its own project compiles at -O0 (its Release flags by default).
  sed -i 's|-DCMAKE_BUILD_TYPE=$<CONFIG>$|-DCMAKE_BUILD_TYPE=$<CONFIG> -DCMAKE_CXX_FLAGS_RELEASE=-O0|' \
    "$src/llama.cpp/ggml/src/ggml-vulkan/CMakeLists.txt"
fi

echo "building llama.cpp's $backend backend (minutes; the first Vulkan build compiles its shaders)…" >&2
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$src/llama.cpp" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL=ON -DGGML_NATIVE=OFF "${flags[@]}" -DCMAKE_BUILD_RPATH='$ORIGIN' \
  -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags \
  -DCMAKE_C_FLAGS_RELEASE="-O$opt -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O$opt -DNDEBUG" \
  -DCMAKE_PROJECT_INCLUDE="$root/scripts/llama-serving.cmake" \
  -DLLAMA_BUILD_SERVER="$server" -DLLAMA_BUILD_TOOLS="$tools" -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_COMMON="$tools" -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF >&2
if [ "$backend" = rpc-server ]; then
  cmake --build "$work/build" --target ggml-rpc-server ggml-rpc ggml-cpu -j "$(nproc)" >&2
  # The server with what it loads (found beside it): ggml's libraries, its RPC and CPU modules.
  server="$dest/rpc-server"
  rm -rf "$server.partial" && mkdir -p "$server.partial"
  cp "$work/build/bin/ggml-rpc-server" "$work/build/bin/"lib*.so* "$server.partial/"
  rm -rf "$server" && mv "$server.partial" "$server"
elif [ "$backend" = tests ]; then
  cmake --build "$work/build" --target ggml-vulkan ggml-rpc ggml-rpc-server llama-server -j "$(nproc)" >&2
  # Each program's folder holds what it loads (found beside it; no other backend's module, which
  # it would load too) and a link to the engine's CPU module. The programs' search path is a
  # DT_RPATH ($ORIGIN; --disable-new-dtags above), which, unlike RUNPATH, serves the modules they
  # load too: that CPU module finds libggml-base.so beside the program.
  bin="$work/build/bin"
  install_folder() { # FOLDER LINK-TO-target/ FILE...
    local folder="$dest/$1" up="$2"; shift 2
    rm -rf "$folder.partial" && mkdir -p "$folder.partial"
    cp -P "$@" "$folder.partial/"
    ln -s "$up/ggml-backends/libggml-cpu.so" "$folder.partial/libggml-cpu.so"
    rm -rf "$folder" && mkdir -p "$(dirname "$folder")" && mv "$folder.partial" "$folder"
  }
  install_folder ggml-backends-vulkan .. "$bin/libggml-vulkan.so"
  install_folder ggml-backends-rpc .. "$bin/libggml-rpc.so"
  install_folder ggml-backends-rpc/rpc-server ../.. "$bin/ggml-rpc-server" "$bin"/libggml.so* "$bin"/libggml-base.so* "$bin/libggml-rpc.so"
  install_folder llama-server-tests/bin ../.. "$bin/llama-server" "$bin"/libggml.so* "$bin"/libggml-base.so* \
    "$bin"/libllama*.so* "$bin"/libmtmd.so*
else
  cmake --build "$work/build" --target "ggml-$backend" -j "$(nproc)" >&2
  cp "$work/build/bin/libggml-$backend.so" "$module.partial"
  mv "$module.partial" "$module"
fi
echo "$made_from $backend" >"$work/made-from"
echo "$module"
