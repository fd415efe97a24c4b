#!/usr/bin/env bash
# Installs Debian's cross compiler for linux/arm64 (gcc-aarch64-linux-gnu,
# which brings the arm64 C library, static libc.a included, as
# libc6-dev-arm64-cross) when aarch64-linux-gnu-gcc is missing: the release
# build (packaging/release.sh) links SQLite's C code statically for arm64
# with it. Uses sudo when not root, as the other install scripts do.
set -euo pipefail

if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq gcc-aarch64-linux-gnu >/dev/null
fi
echo "cross compiler: $(command -v aarch64-linux-gnu-gcc) ($(aarch64-linux-gnu-gcc -dumpversion))"
