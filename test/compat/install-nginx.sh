#!/usr/bin/env bash
# Makes sure the forward-auth browser test (forwardauth.test.mjs) has a real
# nginx with the auth_request module: Debian's nginx package, installed with
# apt-get when missing (as root or through sudo). The package may start a
# server of its own on port 80; the test does not use it, so it is stopped.
# The test runs its own nginx in a temporary folder, on free ports.
set -euo pipefail

have_nginx() {
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]
}

if ! have_nginx; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq nginx >/dev/null
  $SUDO service nginx stop >/dev/null 2>&1 || true
fi
bin="$(command -v nginx || echo /usr/sbin/nginx)"
# Read whole first: with pipefail, grep -q quitting early could kill the
# writer with SIGPIPE and fail the check at random.
build="$("$bin" -V 2>&1 || true)"
if ! grep -q -- --with-http_auth_request_module <<<"$build"; then
  echo "install-nginx.sh: $bin lacks the auth_request module" >&2
  exit 1
fi
echo "nginx: $bin ($("$bin" -v 2>&1 | sed 's/.*: //'))"
