#!/usr/bin/env bash
# Makes sure the container test (test/packaging) and `go tool task image` can
# build and run the image: Debian's buildah (it brings crun, the containers
# configuration and the vfs storage driver the test uses), and Debian's
# ca-certificates, whose /etc/ssl/certs/ca-certificates.crt goes into the
# image. Installs them when missing (apt-get, through sudo when not root;
# waits for another apt-get's lock instead of failing on it).
set -euo pipefail

missing=()
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
[ -f /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "buildah: $(buildah --version)"
