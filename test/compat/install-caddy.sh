#!/usr/bin/env bash
# Makes sure the Caddy forward-auth checks (caddy.test.mjs) have a real
# Caddy: Debian's caddy package, installed with apt-get when missing (as root
# or through sudo). The package may start a server of its own (a systemd
# unit on port 80 with an admin endpoint on 2019); the test does not use it,
# so it is stopped and disabled. The test runs its own caddy in a temporary
# folder, on free ports, with `caddy run`.
set -euo pipefail

if ! command -v caddy >/dev/null 2>&1 && [ ! -x /usr/bin/caddy ]; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq caddy >/dev/null
  $SUDO systemctl disable --now caddy >/dev/null 2>&1 || $SUDO service caddy stop >/dev/null 2>&1 || true
fi
bin="$(command -v caddy || echo /usr/bin/caddy)"
# The list is read whole first: with pipefail, grep -q quitting at its match
# would make caddy die of SIGPIPE mid-list and the check fail at random.
modules="$("$bin" list-modules 2>/dev/null || true)"
if ! grep -qx 'http.handlers.reverse_proxy' <<<"$modules"; then
  echo "install-caddy.sh: $bin lacks the reverse_proxy module (forward_auth needs it)" >&2
  exit 1
fi
echo "caddy: $bin ($("$bin" version 2>&1 | head -n1))"
