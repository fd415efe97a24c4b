#!/usr/bin/env bash
# Builds latchkey's release from the git checkout it is in (`go tool task release`):
#
#   DIR/latchkey_<version>_linux_amd64   static binaries (SQLite's C code linked in,
#   DIR/latchkey_<version>_linux_arm64   glibc statically; no PT_INTERP, no DT_NEEDED)
#   DIR/SHA256SUMS                       `sha256sum -c SHA256SUMS` checks them
#   DIR/latchkey_<version>.cdx.json      CycloneDX SBOM: every module linked in (the
#                                        first binary's), Go's standard library too
#
# Usage: packaging/release.sh [--out DIR] [--arch "amd64 arm64"] [--version V] [--no-sbom]
#   --out DIR      where the artefacts go (default: the checkout's dist/, or $DIST); the folder's
#                  earlier binaries and SBOMs (any version) and SHA256SUMS are replaced
#   --arch LIST    the architectures, space- or comma-separated (default: both, or $ARCHES)
#   --version V    the version stamped in (`latchkey version`) and in the names
#                  (default: $VERSION, else `git describe --tags --always`, and
#                  -dirty when `git status` lists anything, untracked files too)
#   --no-sbom      skip the SBOM (a quick binary for a test)
# It prints the artefacts' paths, one a line, on stdout; the build's own
# output goes to stderr.
#
# Reproducible: two builds of one commit (with the same Go and C toolchains)
# are byte-identical. -trimpath removes the build's paths (Go passes the C
# compiler -ffile-prefix-map for cgo too, and records neither -ldflags nor
# CGO_* flags in the build information); -buildid= drops the Go build ID;
# SOURCE_DATE_EPOCH is the commit's time; the commit and its time (never the
# build's clock) are stamped by the linker and, in a clone, by -buildvcs=true
# too, so a git checkout is required. A linked worktree (`git worktree add`)
# gets no vcs.* build settings from Go: compare builds of the same kind.
#
# arm64 is cross-compiled with Debian's gcc-aarch64-linux-gnu, installed by
# packaging/install-cross.sh when missing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${DIST:-$root/dist}"
arches="${ARCHES:-amd64 arm64}"
version="${VERSION:-}"
sbom=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --arch) arches="$2"; shift 2 ;;
    --version) version="$2"; shift 2 ;;
    --no-sbom) sbom=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "release.sh: unknown argument $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
arches="${arches//,/ }"

mkdir -p "$out"
out="$(cd "$out" && pwd)" # relative to where it was called from
cd "$root"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "release.sh: not a git checkout: the build stamps the commit (-buildvcs=true)" >&2
  exit 1
fi
# Dirty as Go counts it (vcs.modified): anything `git status` lists,
# untracked files included (git describe --dirty ignores those).
dirty=""
if [ -n "$(git status --porcelain)" ]; then dirty=1; fi
if [ -z "$version" ]; then
  version="$(git describe --tags --always)${dirty:+-dirty}"
fi
case "$version" in
  *[!A-Za-z0-9._+~-]*|"") echo "release.sh: version \"$version\" is not usable in a file name" >&2; exit 2 ;;
esac

# The commit's time, so that nothing depends on when the build ran (the C
# compiler's __DATE__/__TIME__ honour it too).
SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)"
export SOURCE_DATE_EPOCH
# Only what is set here shapes the build, not a GOFLAGS of the caller's
# (this machine's sets -buildvcs=false).
export GOFLAGS="" CGO_ENABLED=1 GOOS=linux
# The commit and its time are stamped through the linker too: Go's own VCS
# stamping (-buildvcs) finds no .git folder in a linked git worktree.
commit="$(git rev-parse HEAD)${dirty:++dirty}"
committed="$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)"
tags="osusergo,netgo,sqlite_omit_load_extension"
ldflags="-s -w -buildid= -X main.version=${version} -X main.commit=${commit} -X main.commitTime=${committed}"
ldflags="$ldflags -linkmode external -extldflags \"-static\""

host="$(go env GOHOSTARCH)"
compiler() { # the C compiler for GOARCH $1
  if [ "$1" = "$host" ]; then
    echo "${CC:-gcc}"
    return
  fi
  case "$1" in
    amd64) echo x86_64-linux-gnu-gcc ;;
    arm64) echo aarch64-linux-gnu-gcc ;;
    *) echo "release.sh: no C cross compiler known for $1" >&2; return 1 ;;
  esac
}

rm -f "$out"/latchkey_*_linux_* "$out"/latchkey_*.cdx.json "$out/SHA256SUMS"
files=()
for arch in $arches; do
  cc="$(compiler "$arch")"
  if ! command -v "$cc" >/dev/null 2>&1; then
    if [ "$arch" = arm64 ]; then
      "$root/packaging/install-cross.sh" >&2
    else
      echo "release.sh: the C compiler $cc for $arch is missing" >&2
      exit 1
    fi
  fi
  name="latchkey_${version}_linux_${arch}"
  echo "release.sh: building $name (CC=$cc)" >&2
  GOARCH="$arch" CC="$cc" go build -trimpath -buildvcs=true -tags "$tags" \
    -ldflags "$ldflags" -o "$out/$name" .
  files+=("$name")
done

if [ "$sbom" = 1 ]; then
  name="latchkey_${version}.cdx.json"
  echo "release.sh: SBOM $name" >&2
  # From the first binary's embedded build information (`go version -m`):
  # exactly the modules linked in, the standard library's version among
  # them (arm64's and amd64's are the same: no module is chosen by
  # architecture). No serial number or timestamp, so that it is
  # reproducible too. (No -licenses: that downloads every module, the
  # main one included, which only a published version could do.)
  go tool cyclonedx-gomod bin -json -std -noserial -notimestamp -version "$version" \
    -output "$out/$name" "$out/${files[0]}" >&2
  files+=("$name")
fi

(cd "$out" && sha256sum "${files[@]}" > SHA256SUMS)
for f in "${files[@]}" SHA256SUMS; do
  echo "$out/$f"
done
