#!/bin/sh
# Builds the Debian package of a latchkey binary with nfpm:
#   packaging/deb/build.sh BINARY VERSION [GOARCH] [OUTDIR]
# BINARY: a static Linux latchkey (packaging/release.sh builds one).
# VERSION: the release (v1.4.0 or 1.4.0; the leading v is dropped, as
# Debian versions start with a digit). GOARCH: amd64 (default) or arm64.
# OUTDIR: where latchkey_<version>_<arch>.deb goes (default dist). Prints
# the package's path. SOURCE_DATE_EPOCH (default: the commit's time) fixes
# the files' dates, so one binary gives one byte-identical package.
# LATCHKEY_DEB_CONFIG_SOURCE (default: the repository's config.yaml) is the
# file /etc/latchkey/config.yaml is made from.
#   packaging/deb/build.sh --prepare
# only builds nfpm (Go caches it), so that a later build need not wait.
set -eu

nfpm=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
if [ "${1:-}" = --prepare ]; then
	exec go run "$nfpm" --version >/dev/null
fi

if [ $# -lt 2 ] || [ $# -gt 4 ]; then
	echo "usage: $0 BINARY VERSION [GOARCH] [OUTDIR]" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
version=${2#v}
arch=${3:-amd64}
outdir=${4:-$root/dist}
case $version in
[0-9]*) ;;
*) echo "$0: version $2 must start with a digit (or v and a digit)" >&2; exit 2 ;;
esac
[ -x "$binary" ] || { echo "$0: $binary is not an executable" >&2; exit 1; }
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH

# /etc/latchkey/config.yaml: the repository's commented config.yaml (the
# one embedded in the binary) with the data in /var/lib/latchkey.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
source=${LATCHKEY_DEB_CONFIG_SOURCE:-$root/config.yaml}
n=$(grep -c '^data_dir: data$' "$source" || true)
if [ "$n" != 1 ]; then
	echo "$0: config.yaml must have exactly one line 'data_dir: data' (found $n)" >&2
	exit 1
fi
{
	echo '# /etc/latchkey/config.yaml, installed by the latchkey Debian package: a'
	echo '# conffile, so upgrades keep your edits. Secrets belong in'
	echo '# /etc/latchkey/latchkey.env (root only), referenced here as ${VAR}.'
	echo '# Check it with: latchkey --config /etc/latchkey/config.yaml check-config'
	echo '# then: systemctl restart latchkey'
	echo
	sed 's|^data_dir: data$|data_dir: /var/lib/latchkey|' "$source"
} >"$stage/config.yaml"
touch -d "@$SOURCE_DATE_EPOCH" "$stage/config.yaml"

deb="$outdir/latchkey_${version}_${arch}.deb"
cd "$root"
LATCHKEY_DEB_VERSION=$version LATCHKEY_DEB_ARCH=$arch \
LATCHKEY_DEB_BINARY=$binary LATCHKEY_DEB_CONFIG=$stage/config.yaml \
	go run "$nfpm" pkg \
	--config packaging/deb/nfpm.yaml --packager deb --target "$deb" >&2
echo "$deb"
