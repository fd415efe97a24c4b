#!/usr/bin/env bash
# Installs Debian's oathtool when it is missing: the two-factor tests take
# their authenticator codes from it, an implementation of RFC 6238 that is
# not the one latchkey uses (pquerna/otp).
set -euo pipefail
if ! command -v oathtool >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq oathtool >/dev/null
fi
echo "oathtool: $(command -v oathtool)"
