package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/latchkey-auth/latchkey/app/metrics"
)

// Set by the release build (packaging/release.sh: -ldflags "-X
// main.version=v1.2.3 -X main.commit=... -X main.commitTime=..."); empty,
// as in `go build` and `go run .`, means what Go stamped in the build
// information: the module's version (or "devel"), the VCS revision and
// time. The release sets the commit too because Go stamps none in a linked
// git worktree (it looks for a .git folder). These are main's only package
// variables: the linker can set nothing else.
var version, commit, commitTime string

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
	return readBuild(buildInfo{Version: version, Commit: commit, Date: commitTime}, bi)
}

// readBuild is currentBuild's work: what the linker set (linker's
// Version, Commit and Date, each empty when not set) completed from the
// build information (nil when the binary has none).
func readBuild(linker buildInfo, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: "devel", Commit: "unknown", Date: "unknown",
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
		// Go stamps the main module's version from the VCS (a tag, or a
		// pseudo-version) since Go 1.24; "(devel)" when it could not.
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
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
	}
	if linker.Version != "" {
		b.Version = linker.Version
	}
	if linker.Commit != "" {
		b.Commit = linker.Commit
	}
	if linker.Date != "" {
		b.Date = linker.Date
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
