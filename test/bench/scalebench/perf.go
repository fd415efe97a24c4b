package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// perfRecorder records latchkey's CPU profile with Linux perf during the
// loads of the last round (BENCH_PERF=DIR): a growth of latchkey's own
// CPU per request between the sizes is a question for a profile, and
// only the real binary under the bench's load shows it. The zero value
// records nothing.
type perfRecorder struct {
	dir    string // where the profiles go; "": off
	prefix string // the dialect and size, e.g. "postgres-10000000"
}

// start runs `perf record` on pid until the returned stop is called; the
// profile is dir/prefix-name.data (read it with `perf report -i`). A perf
// that cannot start is logged and the load runs unprofiled.
func (p perfRecorder) start(pid int, name string) (stop func()) {
	if p.dir == "" {
		return func() {}
	}
	out := filepath.Join(p.dir, fmt.Sprintf("%s-%s.data", p.prefix, name))
	cmd := exec.Command("perf", "record", "--quiet", "-F", "499", "-g", "-p", strconv.Itoa(pid), "-o", out)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		logf("perf record: %v", err)
		return func() {}
	}
	return func() {
		// perf writes its file on SIGINT, as on Ctrl-C, and exits with
		// the signal's status: the file tells whether it recorded.
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		if _, err := os.Stat(out); err != nil {
			logf("perf record: no profile: %v", err)
		}
	}
}
