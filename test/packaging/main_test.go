//go:build packaging

// Package packaging_test builds latchkey's release the way a maintainer
// does (packaging/release.sh, which `go tool task release` runs) and checks
// each artefact as a user would: the binaries are static and reproducible,
// the checksums verify, the SBOM lists every module, the binary says which
// version it is.
//
// It is behind the build tag "packaging" (`go tool task test:packaging`
// runs it; `go tool task test` runs that beside the Go tests): its time is
// the release's static cgo builds (one of them from an empty build cache,
// to show that the bytes come from the source, not the cache), run as
// processes the race detector would not watch, and it must not share go
// test ./...'s default 10-minute limit with the rest of the suite on a
// two-core machine. It installs what it needs (Debian's arm64 cross
// compiler) and skips nothing.
package packaging_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// root is the repository's checkout (the test runs in test/packaging).
var root = func() string {
	p, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return p
}()

// scratch holds the shared release; TestMain removes it.
var scratch string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "latchkey-packaging-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "packaging:", err)
		os.Exit(1)
	}
	scratch = dir
	code := m.Run()
	if rebuild.cancel != nil { // started, perhaps for no test that ran
		rebuild.cancel()
		<-rebuild.done
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// release is one run of packaging/release.sh.
type release struct {
	dir     string
	version string
	files   []string // the paths it printed: binaries, SBOM, SHA256SUMS
}

// binary is the release's binary for arch.
func (r release) binary(arch string) string {
	return filepath.Join(r.dir, "latchkey_"+r.version+"_linux_"+arch)
}

var (
	sharedOnce sync.Once
	shared     release
	sharedErr  error
)

// fullRelease is `go tool task release` into a folder of its own: both
// architectures and the SBOM, the version from git describe; built once for
// every test of the package that needs a release artefact.
func fullRelease(t *testing.T) release {
	t.Helper()
	startRebuild()
	sharedOnce.Do(func() {
		shared, sharedErr = buildRelease(context.Background(), filepath.Join(scratch, "dist"), nil)
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// rebuild is TestReleaseIsReproducible's second amd64 build, from an
// empty build cache of its own. It starts with the shared release
// (fullRelease) and runs beside it and the container and Debian tests,
// much of whose time is waiting (buildah, dpkg, services starting,
// sign-ins): started by TestReleaseIsReproducible itself, after them, it
// was minutes of this package with nothing beside it. It is still a
// build of its own from an empty cache, so the comparison proves what it
// did. TestMain stops it if no test waited for it.
var rebuild struct {
	once   sync.Once
	done   chan struct{}
	cancel context.CancelFunc
	r      release
	err    error
}

// startRebuild starts the rebuild, once, in scratch.
func startRebuild() {
	rebuild.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		rebuild.done, rebuild.cancel = make(chan struct{}), cancel
		out, cache := filepath.Join(scratch, "rebuild", "dist"), filepath.Join(scratch, "rebuild", "gocache")
		go func() {
			defer close(rebuild.done)
			if rebuild.err = errors.Join(os.MkdirAll(out, 0o755), os.MkdirAll(cache, 0o755)); rebuild.err != nil {
				return
			}
			rebuild.r, rebuild.err = buildRelease(ctx, out, []string{"GOCACHE=" + cache}, "--arch", "amd64", "--no-sbom")
		}()
	})
}

// rebuilt waits for the rebuild (started here if no test has) and returns it.
func rebuilt() (release, error) {
	startRebuild()
	<-rebuild.done
	return rebuild.r, rebuild.err
}

// buildRelease runs packaging/release.sh --out dir with args, in the
// environment plus env, and returns what it built. Cancelling ctx kills
// the script and the build it runs.
func buildRelease(ctx context.Context, dir string, env []string, args ...string) (release, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "packaging", "release.sh"), append([]string{"--out", dir}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return release{}, fmt.Errorf("packaging/release.sh %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	fmt.Fprintf(os.Stderr, "packaging: release.sh --out %s %s took %s\n", dir, strings.Join(args, " "), time.Since(start).Round(time.Second))
	files := strings.Fields(stdout.String())
	if len(files) == 0 {
		return release{}, fmt.Errorf("packaging/release.sh printed nothing:\n%s", stderr.String())
	}
	m := regexp.MustCompile(`/latchkey_(.+)_linux_[a-z0-9]+$`).FindStringSubmatch(files[0])
	if m == nil {
		return release{}, fmt.Errorf("packaging/release.sh printed %q first, not a binary", files[0])
	}
	return release{dir: dir, version: m[1], files: files}, nil
}

// gitOutput is git's answer in the checkout, trimmed.
func gitOutput(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// parseTime reads an RFC 3339 time.
func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }
