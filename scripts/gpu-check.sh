#!/usr/bin/env bash
# Hearth on an NVIDIA GPU, measured against llama.cpp's own llama-server on the same card.
#
# The machine it runs on reaches nothing and has no Rust, but has CUDA's compiler, CMake and
# ninja: Hearth is built here (release) and travels as binaries; the CUDA backend module it loads
# and llama-server are compiled there from the very llama.cpp source Hearth was built from
# (scripts/llama-source.sh), since a backend module must match the ggml it is loaded into. At
# most 64 MiB travel per call, so the work is split in two calls, each carrying half the model:
#
#   scripts/gpu-check.sh prepare DIR     # here: DIR/a (sources, model part 1), DIR/b (Hearth, part 2)
#   scripts/gpu-check.sh start DIR/a     # there, call 1: unpack, start the build in the background
#   scripts/gpu-check.sh run DIR/b OUT   # there, call 2: join the model, wait for the build, measure
#
# `run` writes devices.json (what Hearth's engine found), bench-SECTION.json for each of
# $GPU_CHECK_SECTIONS (default speed,conversation,parallel,decoding and cpu-speed, the speed
# section with the GPU left unused), bench.log and build.log to OUT, within GPU_CHECK_RUN_LIMIT s. GPU_CHECK_BACKEND=cpu rehearses the whole on a machine without a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="${GPU_CHECK_WORK:-/tmp/hearth-gpu-check}"
backend="${GPU_CHECK_BACKEND:-cuda}"
# The model's first part travels with the sources; the rest with Hearth's binaries.
SPLIT_AT=52000000

prepare() {
  local dir="$1" model="$root/target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf"
  [ -f "$model" ] || "$root/scripts/fetch-model.sh" "$root/target/test-data" >/dev/null
  (cd "$root" && cargo build --release -p hearth-cli)
  rm -rf "$dir" && mkdir -p "$dir/a" "$dir/b"
  local tmp; tmp=$(mktemp -d)
  "$root/scripts/llama-source.sh" "$tmp" >/dev/null
  tar cJf "$dir/a/llama-src.tar.xz" -C "$tmp" llama.cpp
  mkdir -p "$tmp/hearth/bin"
  cp "$root/target/release/hearth-cli" "$root"/target/release/lib*.so "$root/target/ggml-backends/libggml-cpu.so" "$tmp/hearth/bin/"
  strip "$tmp/hearth/bin/hearth-cli"
  # Libraries a CUDA image may lack (the keychain's D-Bus, OpenMP), found first beside the binary.
  for lib in libdbus-1.so.3 libgomp.so.1; do
    cp -L "$(ldd "$root/target/release/hearth-cli" | awk -v l="$lib" '$1 == l { print $3 }')" "$tmp/hearth/bin/"
  done
  tar cf - -C "$tmp" hearth | xz -9 -T0 >"$dir/b/hearth.tar.xz"
  rm -rf "$tmp"
  head -c "$SPLIT_AT" "$model" >"$dir/a/model.part1"
  tail -c "+$((SPLIT_AT + 1))" "$model" >"$dir/b/model.part2"
  sha256sum "$model" | cut -d' ' -f1 >"$dir/b/model.sha256"
  du -b "$dir/a" "$dir/b" >&2
}

start() {
  local from="$1"
  rm -rf "$work" && mkdir -p "$work"
  tar xJf "$from/llama-src.tar.xz" -C "$work"
  cp "$from/model.part1" "$work/"
  # A process of its own session outlives this call; the next call waits for it.
  setsid nohup "$0" build >"$work/build.log" 2>&1 </dev/null &
  echo "building llama.cpp ($backend) in $work; log: $work/build.log"
  # The configuration's verdict before this call returns (a missing compiler shows now).
  local until=$((SECONDS + 120))
  until grep -qE "Build files have been written|Configuring incomplete|build failed" "$work/build.log" || [ $SECONDS -ge $until ]; do sleep 2; done
  grep -E "^-- (The CUDA|CUDA|Found CUDA|Using CUDA|ggml|Including)|nvcc|cmake version|cores|Error|error" "$work/build.log" | head -30 || true
  tail -n 5 "$work/build.log"
}

build() {
  local started=$SECONDS flags=() targets=(ggml-cpu llama-server)
  echo "$(nproc) cores; $(cmake --version | head -1)"
  if [ "$backend" = cuda ]; then
    export PATH="$PATH:/usr/local/cuda/bin"
    local nvcc; nvcc=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1 || true)
    echo "nvcc: ${nvcc:-none}"; [ -z "$nvcc" ] || "$nvcc" --version | tail -2
    flags=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${GPU_CHECK_CUDA_ARCH:-90}" ${nvcc:+-DCMAKE_CUDA_COMPILER="$nvcc"})
    targets+=(ggml-cuda)
  fi
  local generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
  if cmake -S "$work/llama.cpp" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL=ON -DGGML_NATIVE=OFF "${flags[@]}" \
      -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
      -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF ${GPU_CHECK_CMAKE_FLAGS:-} \
    && cmake --build "$work/build" --target "${targets[@]}" -j "$(nproc)"; then
    echo "built in $((SECONDS - started)) s"
    touch "$work/build.done"
  else
    echo "build failed after $((SECONDS - started)) s"
    touch "$work/build.failed"
  fi
}

run() {
  local from="$1" out="$2" deadline=$((SECONDS + ${GPU_CHECK_BUILD_WAIT:-480}))
  # The call's own limit (the device tool's is 600 s): what comes back is written before it.
  local stop_at=$((SECONDS + ${GPU_CHECK_RUN_LIMIT:-570}))
  mkdir -p "$out"
  # Again after a call that ran out of time: what is in place stays.
  if [ "$(sha256sum "$work/model.gguf" 2>/dev/null | cut -d' ' -f1)" != "$(cat "$from/model.sha256")" ]; then
    cat "$work/model.part1" "$from/model.part2" >"$work/model.gguf"
    [ "$(sha256sum "$work/model.gguf" | cut -d' ' -f1)" = "$(cat "$from/model.sha256")" ] || { echo "the model's parts do not join up" >&2; exit 1; }
  fi
  [ -x "$work/hearth/bin/hearth-cli" ] || tar xJf "$from/hearth.tar.xz" -C "$work"
  while [ ! -e "$work/build.done" ] && [ ! -e "$work/build.failed" ] && [ $SECONDS -lt $deadline ]; do sleep 5; done
  tail -n 60 "$work/build.log" >"$out/build.log"
  [ -e "$work/build.done" ] || { echo "llama.cpp's build did not finish (see build.log)" >&2; tail -n 30 "$work/build.log" >&2; exit 1; }
  # Hearth's own CPU module beside the GPU module built here from the same source.
  local modules="$work/backends"
  mkdir -p "$modules"
  cp "$work/hearth/bin/libggml-cpu.so" "$modules/"
  [ "$backend" = cpu ] || cp "$work/build/bin/libggml-$backend.so" "$modules/"
  export HEARTH_BACKENDS_DIR="$modules"
  # CUDA's runtime libraries, wherever this machine keeps them.
  local cuda_libs
  cuda_libs=$(python3 -c 'import nvidia, os; print(":".join(os.path.join(p, d, "lib") for p in nvidia.__path__ for d in os.listdir(p)))' 2>/dev/null || true)
  export LD_LIBRARY_PATH="/usr/local/cuda/lib64${cuda_libs:+:$cuda_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv >>"$out/bench.log" || true
  local cli="$work/hearth/bin/hearth-cli"
  "$cli" devices --json >"$out/devices.json" 2>>"$out/bench.log" || true
  cat "$out/devices.json"
  # Each section gets what is left of the call, the most important first; the CPU's speed on
  # this machine (the same binary with its GPU backend left unloaded) last.
  local sections="${GPU_CHECK_SECTIONS:-speed,conversation,parallel,decoding,cpu-speed}"
  for section in $(echo "$sections" | tr , ' '); do
    local left=$((stop_at - SECONDS)) limit=${GPU_CHECK_SECTION_LIMIT:-150}
    [ $left -lt $limit ] && limit=$left
    if [ $limit -lt 20 ]; then echo "== $section: skipped, the call's time is spent" | tee -a "$out/bench.log"; continue; fi
    echo "== $section (at most $limit s)" | tee -a "$out/bench.log"
    local started=$SECONDS args=(--sections "$section" --server "$work/build/bin/llama-server") env=()
    [ "$section" = cpu-speed ] && args=(--sections speed --no-server) env=(HEARTH_DEVICE=cpu)
    env "${env[@]}" timeout "$limit" "$cli" bench --model "$work/model.gguf" "${args[@]}" --json >"$out/bench-$section.json" 2>>"$out/bench.log" \
      || echo "   $section: exit $?" | tee -a "$out/bench.log"
    echo "   $section took $((SECONDS - started)) s" | tee -a "$out/bench.log"
  done
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  start) start "$2" ;;
  build) build ;;
  run) run "$2" "$3" ;;
  *) echo "usage: $0 prepare DIR | start DIR/a | run DIR/b OUT" >&2; exit 2 ;;
esac
