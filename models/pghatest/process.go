package pghatest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runner runs pg_autoctl as the unprivileged user, in the cluster's folder,
// with an environment of its own: pg_autoctl keeps its configuration, state
// and pid files under XDG_CONFIG_HOME, XDG_DATA_HOME and XDG_RUNTIME_DIR, and
// those must be inside the cluster's temporary folder, not in the postgres
// user's home or /tmp, so that removing the folder removes everything.
type runner struct {
	dir  string              // the cluster's temporary folder
	bin  string              // PostgreSQL's bin folder (pg_ctl, initdb, ...)
	cred *syscall.Credential // nil: run as ourselves
}

// env is the whole environment of a pg_autoctl process. C.UTF-8 makes
// pg_autoctl's initdb choose the UTF8 encoding (latchkey's pgx insists on
// it); nothing else is inherited from the test.
func (r *runner) env() []string {
	return []string{
		"PATH=" + r.bin + ":/usr/bin:/bin",
		"HOME=" + r.dir,
		"XDG_CONFIG_HOME=" + filepath.Join(r.dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(r.dir, "share"),
		"XDG_RUNTIME_DIR=" + filepath.Join(r.dir, "run"),
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
	}
}

func (r *runner) command(args ...string) *exec.Cmd {
	cmd := exec.Command(autoctl, args...)
	cmd.Env = r.env()
	cmd.Dir = r.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	return cmd
}

// run runs a pg_autoctl command to its end and returns its output.
func (r *runner) run(args ...string) (string, error) {
	out, err := r.command(args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("pg_autoctl %s: %w: %s", strings.Join(args, " "), err, tail(string(out), 20))
	}
	return string(out), nil
}

// service is one long-running pg_autoctl process (a monitor's or a
// keeper's `pg_autoctl run`, or `create postgres --run`) and the tree it
// starts: its sub-services and the postmaster they run.
type service struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed once the process has exited and been reaped
}

// start starts a long-running pg_autoctl command, its output appended to
// logPath. When the test process dies without cleaning up (a test binary
// time-out), the kernel sends pg_autoctl SIGINT, on which it stops its
// Postgres (fast) and exits; the processes are not left running.
func (r *runner) start(logPath string, args ...string) (*service, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	cmd := r.command(args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("start pg_autoctl %s: %w", strings.Join(args, " "), err)
	}
	s := &service{cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(s.done)
	}()
	return s, nil
}

func (s *service) running() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// kill ends the service's whole process tree at once with SIGKILL, as
// when its host dies: no process of it gets to react (pg_autoctl would
// otherwise restart a dead Postgres, and Postgres would finish a fast
// shutdown).
func (s *service) kill() error {
	if !s.running() {
		return nil
	}
	if err := killTree(s.cmd.Process.Pid); err != nil {
		return err
	}
	select {
	case <-s.done:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("pg_autoctl still running after SIGKILL")
	}
}

// stop asks the service to stop (SIGINT: pg_autoctl stops its Postgres
// with a fast shutdown, which removes its shared memory) and kills its
// tree when it has not within wait.
func (s *service) stop(wait time.Duration) error {
	if !s.running() {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
		return nil
	case <-time.After(wait):
		return s.kill()
	}
}

// killTree sends SIGKILL to root and every process below it. They are all
// stopped first (SIGSTOP) and the tree read again until it no longer
// grows, so that no process forks or restarts another between the reading
// and the killing; then all get SIGKILL in one pass. Postgres' backends
// call setsid, so a process group would not reach them: the tree is read
// from /proc.
func killTree(root int) error {
	stopped := map[int]bool{}
	for range 20 {
		grew := false
		for _, pid := range tree(root) {
			if !stopped[pid] {
				_ = syscall.Kill(pid, syscall.SIGSTOP)
				stopped[pid] = true
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	if len(stopped) == 0 {
		return nil
	}
	for pid := range stopped {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// The stopped processes die on SIGKILL; wait until none is left.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		alive := 0
		for pid := range stopped {
			if pid != root && exists(pid) {
				alive++
			}
		}
		if alive == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("processes below %d survived SIGKILL", root)
}

// tree lists root and its descendants, read from /proc.
func tree(root int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		out = append(out, p)
		for _, c := range children[p] {
			walk(c)
		}
	}
	if exists(root) {
		walk(root)
	}
	return out
}

// parentOf reads a process's parent from /proc/PID/stat, whose second
// field (the command, in parentheses) may itself hold spaces and ')'.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// exists reports whether pid is a live process (a zombie is not).
func exists(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// readTail is the last n lines of a log file, for a failure report.
func readTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return tail(string(b), n)
}
