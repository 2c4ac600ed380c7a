#!/usr/bin/env bash
# The vendored llama-cpp-2 (src-tauri/vendor/llama-cpp-2) is crates.io's 0.1.160 with Hearth's
# patch (src-tauri/vendor/llama-cpp-2.patch: five wrappers and a lint line) applied. This script
# rebuilds that from the two and checks the copy in the tree is exactly it, or writes it (--write,
# for an upgrade: change VERSION and SHA256, refresh the patch, write). Needs crates.io.
#   scripts/vendor-llama-cpp-2.sh           # check
#   scripts/vendor-llama-cpp-2.sh --write   # replace the copy with upstream + patch
set -euo pipefail

VERSION="0.1.160"
SHA256="b98e9f0971b7454a25a550f0bd4577f35b94570be32f8f8dc08d94f4cb2873fe"
root=$(cd "$(dirname "$0")/.." && pwd)
vendor="$root/src-tauri/vendor"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

curl -fsSL --retry 3 -o "$work/crate.tar.gz" "https://static.crates.io/crates/llama-cpp-2/llama-cpp-2-$VERSION.crate"
got=$(sha256sum "$work/crate.tar.gz" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
  echo "llama-cpp-2 $VERSION from crates.io has sha256 $got, not $SHA256" >&2
  exit 1
fi
tar xzf "$work/crate.tar.gz" -C "$work"
rebuilt="$work/llama-cpp-2-$VERSION"
# crates.io's packaging files, which a path dependency does not use.
rm -f "$rebuilt/Cargo.lock" "$rebuilt/Cargo.toml.orig" "$rebuilt/.cargo_vcs_info.json"
patch -s -p1 -d "$rebuilt" <"$vendor/llama-cpp-2.patch"

if [ "${1:-}" = "--write" ]; then
  rm -rf "$vendor/llama-cpp-2"
  cp -r "$rebuilt" "$vendor/llama-cpp-2"
  echo "wrote $vendor/llama-cpp-2 (llama-cpp-2 $VERSION + llama-cpp-2.patch)"
elif diff -r "$rebuilt" "$vendor/llama-cpp-2" >&2; then
  echo "src-tauri/vendor/llama-cpp-2 is llama-cpp-2 $VERSION with llama-cpp-2.patch, nothing else"
else
  echo "src-tauri/vendor/llama-cpp-2 differs from llama-cpp-2 $VERSION + llama-cpp-2.patch (above)" >&2
  exit 1
fi
