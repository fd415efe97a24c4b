#!/usr/bin/env bash
# Makes sure the Go tests can start a throwaway pg_auto_failover formation
# (models/pghatest): pg_autoctl and the monitor's extension for Debian's
# PostgreSQL 15, and, as root, the unprivileged "postgres" user to run them
# as (PostgreSQL refuses root). Installs Debian's pg-auto-failover-cli and
# postgresql-15-auto-failover packages when pg_autoctl is missing.
set -euo pipefail

have_autoctl() {
  command -v pg_autoctl >/dev/null 2>&1 && [ -f /usr/share/postgresql/15/extension/pgautofailover.control ]
}

if ! have_autoctl; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq pg-auto-failover-cli postgresql-15-auto-failover >/dev/null
  # The packages pull in PostgreSQL, whose package starts a cluster of its
  # own; the tests do not need it.
  $SUDO service postgresql stop >/dev/null 2>&1 || true
fi
if [ "$(id -u)" = "0" ] && ! id postgres >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
fi
have_autoctl && echo "pg_auto_failover: $(pg_autoctl --version | head -n 1)"
