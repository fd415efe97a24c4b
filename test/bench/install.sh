#!/usr/bin/env bash
# Makes sure `go tool task bench:http` has its load generator: Debian's wrk,
# installed with apt-get when missing (as root or through sudo). With
# BENCH_POSTGRES set, also PostgreSQL for the throwaway cluster
# (models/pgtest/install.sh).
set -euo pipefail

if ! command -v wrk >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq wrk >/dev/null
fi
case "${BENCH_POSTGRES:-}" in
  ""|0|false|FALSE|False) ;;
  *) "$(dirname "$0")/../../models/pgtest/install.sh" ;;
esac
echo "wrk: $(command -v wrk)"
