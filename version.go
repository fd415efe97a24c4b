package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/latchkey-auth/latchkey/app/metrics"
)

// version is the release's version, set by the release build
// (packaging/release.sh: -ldflags "-X main.version=v1.2.3"). Empty, as in
// `go build` and `go run .`, means the module's version from the build
// information, or "devel". It is the only package variable main has: the
// linker can set nothing else.
var version string

// buildInfo is what `latchkey version` prints: which source this binary was
// built from, and with what.
type buildInfo struct {
	Version string
	// Commit is the VCS revision, with "+dirty" when the work tree had
	// changes; "unknown" when built without VCS information
	// (-buildvcs=false, or outside a git checkout).
	Commit string
	// Date is the commit's time (vcs.time), not the build's: two builds of
	// one commit are identical, and say so.
	Date      string
	GoVersion string
	Platform  string // the running binary's GOOS/GOARCH
}

// currentBuild reads this binary's build information.
func currentBuild() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return readBuild(version, bi)
}

// readBuild is currentBuild's work, on a given linker version and build
// information (nil when the binary has none).
func readBuild(linkerVersion string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: linkerVersion, Commit: "unknown", Date: "unknown",
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		if b.Version == "" {
			b.Version = "devel"
		}
		return b
	}
	if bi.GoVersion != "" {
		b.GoVersion = bi.GoVersion
	}
	if b.Version == "" {
		// Go stamps the main module's version from the VCS (a tag, or a
		// pseudo-version) since Go 1.24; "(devel)" when it could not.
		b.Version = bi.Main.Version
		if b.Version == "" || b.Version == "(devel)" {
			b.Version = "devel"
		}
	}
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Date = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && b.Commit != "unknown" {
		b.Commit += "+dirty"
	}
	return b
}

// String is `latchkey version`'s line.
func (b buildInfo) String() string {
	return fmt.Sprintf("latchkey %s (commit %s, built %s, %s, %s)", b.Version, b.Commit, b.Date, b.GoVersion, b.Platform)
}

// metrics is the build as the latchkey_build_info metric labels it.
func (b buildInfo) metrics() metrics.Build {
	return metrics.Build{Version: b.Version, Commit: b.Commit, GoVersion: b.GoVersion}
}
