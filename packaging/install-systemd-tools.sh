#!/usr/bin/env bash
# Makes sure the Debian package's test (test/packaging/deb_test.go) has
# systemd-analyze, to verify the unit and score its hardening: Debian's
# systemd package, installed with apt-get when missing (as root or through
# sudo). Nothing is started: the test only reads unit files with it.
set -euo pipefail

if ! command -v systemd-analyze >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq systemd >/dev/null
fi
echo "systemd-analyze: $(command -v systemd-analyze) ($(systemd-analyze --version | head -1))"
