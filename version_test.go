package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The version comes from the linker when the release build sets it, else
// from the module version Go stamped, else "devel"; the commit and its
// time from the VCS settings, "+dirty" for a modified work tree.
func TestVersionFromBuildInfo(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2025-01-02T03:04:05Z"},
		{Key: "vcs.modified", Value: "false"},
	}
	release := readBuild("v1.2.3", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20250102030405-0123456789ab"}, Settings: vcs})
	require.Equal(t, buildInfo{Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2025-01-02T03:04:05Z",
		GoVersion: "go1.26.8", Platform: platform}, release)
	require.Equal(t, "latchkey v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567, built 2025-01-02T03:04:05Z, go1.26.8, "+platform+")", release.String())

	stamped := readBuild("", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.3.0"}, Settings: vcs})
	require.Equal(t, "v1.3.0", stamped.Version)

	dirty := append([]debug.BuildSetting{}, vcs[:3]...)
	dirty = append(dirty, debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	devel := readBuild("", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: dirty})
	require.Equal(t, "devel", devel.Version)
	require.Equal(t, "0123456789abcdef0123456789abcdef01234567+dirty", devel.Commit)

	// -buildvcs=false, or a build outside a git checkout: nothing to tell.
	bare := readBuild("", &debug.BuildInfo{GoVersion: "go1.26.8"})
	require.Equal(t, buildInfo{Version: "devel", Commit: "unknown", Date: "unknown", GoVersion: "go1.26.8", Platform: platform}, bare)
	require.Equal(t, "devel", readBuild("", nil).Version)
	require.Equal(t, runtime.Version(), readBuild("", nil).GoVersion)

	m := release.metrics()
	require.Equal(t, []string{"v1.2.3", "0123456789abcdef0123456789abcdef01234567", "go1.26.8"}, []string{m.Version, m.Commit, m.GoVersion})
}

// `latchkey version`, `--version` (before or after a command) and
// check-config print the same line.
func TestVersionCommand(t *testing.T) {
	clearEnv(t)
	want := currentBuild().String()
	require.True(t, strings.HasPrefix(want, "latchkey "), want)
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}, {"check-config", "--version"}} {
		code, stdout, stderr := runCmd(args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		require.Equal(t, want+"\n", stdout, args)
		require.Empty(t, stderr, args)
	}
	code, _, stderr := runCmd("version", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `unexpected argument "extra"`)

	code, stdout, stderr := runCmd("check-config")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(stdout, want+"\n"), stdout)
}
