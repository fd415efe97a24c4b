#!/usr/bin/env bash
# Installs oauth2-proxy, the real program, for the openid suite
# (openid.test.mjs): `go install` of github.com/oauth2-proxy/oauth2-proxy/v7
# at the version pinned below, from the Go module proxy, into bin/ at the
# repository root (git ignores it; bin/latchkey lives there too). It builds
# in about 40 s; nothing happens when bin/oauth2-proxy already is that
# version (`go version -m` reads the module version built into it).
set -euo pipefail
cd "$(dirname "$0")/../.."

VERSION=v7.15.6
MODULE=github.com/oauth2-proxy/oauth2-proxy/v7
BIN=bin/oauth2-proxy

if [ -x "$BIN" ] && go version -m "$BIN" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+${MODULE}[[:space:]]+${VERSION}([[:space:]]|$)"; then
  echo "oauth2-proxy ${VERSION}: ${BIN}"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-oauth2-proxy.sh: go is required" >&2
  exit 1
fi
mkdir -p bin
# Outside any module's settings: the version is the one named here, not
# one this repository's go.mod would pick.
GOBIN="$PWD/bin" GOFLAGS= GOWORK=off go install "${MODULE}@${VERSION}"
echo "oauth2-proxy ${VERSION}: built ${BIN}"
