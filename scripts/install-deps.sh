#!/usr/bin/env bash
# Installs what building and testing Weft needs on Debian: the OpenCL runtime for the
# CPU (POCL) with the ICD loader and headers, Neovim for the editor test, Node.js and
# npm for the VS Code extension, and for its end-to-end test (editors/vscode/e2e) Debian's
# Chromium, ripgrep, curl and a C/C++ toolchain (code-server's native modules are built
# from source). Rust (cargo, rustc 1.95 or newer) must already be
# installed (https://rustup.rs). Safe to run again: it installs only what is missing.
set -euo pipefail

packages=(pocl-opencl-icd ocl-icd-opencl-dev clinfo neovim nodejs npm python3 python3-numpy graphviz
  chromium ripgrep curl g++ make)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
# Node.js may come from elsewhere than Debian (a newer build); accept any `node`/`npm`.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}")
  missing=("${missing[@]/npm}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
if ! command -v cargo >/dev/null; then
  echo "error: cargo is not installed; install Rust 1.95 or newer (https://rustup.rs)" >&2
  exit 1
fi
