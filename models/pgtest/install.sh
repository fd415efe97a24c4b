#!/usr/bin/env bash
# Makes sure the Go tests can start a throwaway PostgreSQL cluster: initdb
# and pg_ctl (on the PATH or in Debian's /usr/lib/postgresql/*/bin), and, as
# root, the unprivileged "postgres" user to run them as (PostgreSQL refuses
# root). Installs Debian's postgresql package when they are missing.
set -euo pipefail

have_pg() {
  command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
}

if ! have_pg; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq postgresql >/dev/null
  # The package starts a cluster of its own; the tests do not need it.
  $SUDO service postgresql stop >/dev/null 2>&1 || true
fi
if [ "$(id -u)" = "0" ] && ! id postgres >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
fi
have_pg && echo "PostgreSQL: $( (command -v initdb || ls /usr/lib/postgresql/*/bin/initdb | tail -1) )"
