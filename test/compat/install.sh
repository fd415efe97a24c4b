#!/usr/bin/env bash
# Installs what the compatibility suite needs on a fresh machine:
#  - the npm packages pinned in package-lock.json (npm ci), and nextapp/'s;
#  - Debian's chromium for the browser tests, when /usr/bin/chromium is missing,
#    and a CJK font (fonts-wqy-zenhei) when none is installed;
#  - Debian's postgresql (initdb, pg_ctl, psql) for the client suite's
#    PostgreSQL configuration, when initdb is missing (models/pgtest/install.sh,
#    which the Go tests use too; as root it also makes sure the `postgres` user exists);
#  - Debian's oathtool for the two-factor suite's codes, when missing
#    (app/twofactor/oathtool/install.sh, which the Go tests use too).
# Playwright never downloads a browser here (playwright-core only).
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v node >/dev/null 2>&1; then
  echo "install.sh: node (v20 or later) is required" >&2
  exit 1
fi

npm ci --no-audit --no-fund --loglevel=error
# The real Next.js app of nextjs.test.mjs (its own lockfile; built by the suite).
(cd nextapp && npm ci --no-audit --no-fund --loglevel=error)

if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium >/dev/null
fi
/usr/bin/chromium --version 2>/dev/null
# A font with Chinese, Japanese and Korean glyphs, so the pages in those
# languages render (and their screenshots show text, not boxes).
# (The list is read whole: with pipefail, grep -q quitting at the first
# line could kill fc-list with SIGPIPE and reinstall at random.)
if [ -z "$(fc-list :lang=ja 2>/dev/null || true)" ]; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq fonts-wqy-zenhei >/dev/null
fi
../../models/pgtest/install.sh
# Debian's oathtool: the two-factor suite's authenticator codes (an RFC 6238
# implementation that is not latchkey's).
../../app/twofactor/oathtool/install.sh
