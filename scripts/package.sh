#!/usr/bin/env bash
# make package: Hearth's .deb and .rpm, made offline by Tauri's bundler (its AppImage step downloads
# linuxdeploy from GitHub, out of reach on these machines). A package holds:
#   /usr/bin/hearth          the app; its engine runs in a child process of this same binary
#   /usr/bin/hearth-cli      the same crates headless (as LM Studio ships `lms`)
#   /usr/lib/hearth/         llama.cpp's libraries (the binaries' rpath names this folder,
#                            .cargo/config.toml) and ggml-backends/, the compute backends' modules
#                            this machine built (the CPU's; Vulkan's and RPC's where built)
#   a desktop entry offering Hearth for .gguf files, their MIME type, icons at every size.
# PROFILE=debug bundles the debug build (cheap, for tests); BUNDLE_ONLY=1 bundles what is built
# already (the tests' own build: nothing compiles); BUNDLES=deb for one kind; arguments go to
# Tauri's bundler (`--config '{"version":…}'`). Prints the packages' paths last.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
case "$profile" in
  release) cargo_flag=--release tauri_flag="" ;;
  debug) cargo_flag="" tauri_flag=--debug ;;
  *) echo "PROFILE must be release or debug, not $profile" >&2; exit 2 ;;
esac
out="$PWD/target/$profile"

bundles=${BUNDLES:-deb,rpm}
[ -n "${BUNDLE_ONLY:-}" ] || cargo build $cargo_flag -p hearth-cli >&2

# What the bundler adds besides the app: destination in the package → file here.
files=$(mktemp --suffix=.json)
trap 'rm -f "$files"' EXIT
python3 - "$out" "$files" <<'PY'
import glob, json, os, sys
out, dest = sys.argv[1], sys.argv[2]
root = os.getcwd()
files = {"/usr/bin/hearth-cli": f"{out}/hearth-cli", "/usr/share/mime/packages/hearth-gguf.xml": f"{root}/packaging/gguf-mime.xml"}
for lib in ("libllama.so", "libllama-common.so", "libmtmd.so", "libggml.so", "libggml-base.so"):
    files[f"/usr/lib/hearth/{lib}"] = f"{out}/{lib}"
# The CPU's module, and a GPU's or RPC's where this machine built them (scripts/build-backend.sh).
for folder in ("ggml-backends", "ggml-backends-vulkan", "ggml-backends-rpc"):
    for module in glob.glob(f"{root}/target/{folder}/libggml-*.so"):
        files.setdefault(f"/usr/lib/hearth/ggml-backends/{os.path.basename(module)}", module)
missing = [src for src in files.values() if not os.path.isfile(src)]
if missing:
    sys.exit(f"not built: {', '.join(missing)}")
json.dump({"bundle": {"linux": {"deb": {"files": files}, "rpm": {"files": files}}}}, open(dest, "w"))
PY
# Only this run's packages are listed last.
for kind in ${bundles//,/ }; do rm -f "$out"/bundle/"$kind"/*."$kind"; done
if [ -n "${BUNDLE_ONLY:-}" ]; then
  scripts/tauri.sh bundle $tauri_flag --bundles "$bundles" --config "$files" "$@" >&2
else
  scripts/tauri.sh build $tauri_flag --bundles "$bundles" --config "$files" "$@" >&2
fi
for kind in ${bundles//,/ }; do ls -1 "$out"/bundle/"$kind"/*."$kind"; done
