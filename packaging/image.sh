#!/usr/bin/env bash
# Builds the container image (Containerfile) from release binaries with
# Debian's buildah and writes it as an OCI archive (podman load, docker load,
# skopeo copy oci-archive:FILE docker://registry/...).
#
#   packaging/image.sh OUT.tar AMD64_BINARY [ARM64_BINARY]
#
# The binaries are static linux builds (go tool task release). With an arm64
# one too, the archive holds a multi-arch image index (linux/amd64 and
# linux/arm64) instead of a single image. Environment:
#   IMAGE_NAME          the name inside the archives (default latchkey:devel)
#   DOCKER_ARCHIVE      also write the amd64 image to this file as a
#                       docker-archive (docker load). The OCI image format has
#                       no HEALTHCHECK, so the OCI archive's images lack it;
#                       this one (Docker's format) keeps it. Same layer.
#   SOURCE_DATE_EPOCH   the images' created time (default: the commit's), so
#                       two builds of one commit are the same image
# buildah runs with the vfs storage driver (no fuse, no overlay mounts) in a
# temporary storage folder removed at the end: nothing is left in
# /var/lib/containers. packaging/install-buildah.sh installs buildah.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 OUT.tar AMD64_BINARY [ARM64_BINARY]" >&2
  exit 2
fi
out=$1 amd64=$2 arm64=${3:-}
repo=$(cd "$(dirname "$0")/.." && pwd)
name=${IMAGE_NAME:-latchkey:devel}
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}

work=$(mktemp -d "${TMPDIR:-/tmp}/latchkey-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The build context: only what the Containerfile copies (its header lists it).
ctx=$work/context
mkdir -p "$ctx"
mkdir -p "$ctx/data/data" "$ctx/tmp/tmp"
chmod 0700 "$ctx/data/data"
chmod 1777 "$ctx/tmp/tmp"
cp "$repo/Containerfile" "$repo/packaging/container/passwd" "$repo/packaging/container/group" "$ctx/"
cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
chmod 0644 "$ctx/passwd" "$ctx/group" "$ctx/ca-certificates.crt"
install -m 0755 "$amd64" "$ctx/latchkey-linux-amd64"
arches=(amd64)
if [ -n "$arm64" ]; then
  install -m 0755 "$arm64" "$ctx/latchkey-linux-arm64"
  arches+=(arm64)
fi

bah() { buildah --storage-driver vfs --root "$work/root" --runroot "$work/run" "$@"; }
for arch in "${arches[@]}"; do
  # Docker's format: buildah drops HEALTHCHECK from an OCI-format build.
  bah bud --quiet --format docker --timestamp "$epoch" --identity-label=false \
    --platform "linux/$arch" -f "$ctx/Containerfile" -t "localhost/latchkey-build:$arch" "$ctx" >/dev/null
done

rm -f "$out"
if [ ${#arches[@]} -eq 1 ]; then
  bah push --quiet localhost/latchkey-build:amd64 "oci-archive:$out:$name"
else
  bah manifest create "$name" >/dev/null
  for arch in "${arches[@]}"; do
    bah manifest add "$name" "containers-storage:localhost/latchkey-build:$arch" >/dev/null
  done
  bah manifest push --quiet --all "$name" "oci-archive:$out:$name"
fi
echo "image: $out ($name, linux/${arches[*]})"
if [ -n "${DOCKER_ARCHIVE:-}" ]; then
  rm -f "$DOCKER_ARCHIVE"
  bah push --quiet "$(bah images --quiet --no-trunc localhost/latchkey-build:amd64)" "docker-archive:$DOCKER_ARCHIVE:$name"
  echo "image: $DOCKER_ARCHIVE ($name, linux/amd64, Docker's format)"
fi
