package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/latchkey-auth/latchkey/test/bench/procfs"
	"github.com/latchkey-auth/latchkey/test/testport"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// benchSecret signs the bench instances' cookies; they live for one run.
const benchSecret = "latchkey-http-bench-secret-0123456789abcdef"

// basePath is latchkey's default base path, kept by SERVICE_URL below.
const basePath = "/api/auth"

// proc is one server process of the run: the bare handler or a latchkey.
type proc struct {
	Name   string
	Origin string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	logs   *logBuffer
	done   chan struct{}
}

// build compiles latchkey (unless bin names a binary already built) and the
// bare handler into dir, the bare handler twice: as it is, and with all of
// latchkey linked in (-tags linked) for the reference that holds an App.
func build(dir, bin string) (latchkey, bare, bareLinked string, err error) {
	latchkey, bare, bareLinked = bin, filepath.Join(dir, "bare"), filepath.Join(dir, "bare-linked")
	steps := [][]string{
		{"build", "-o", bare, "./test/bench/bare"},
		{"build", "-trimpath", "-tags", "linked", "-o", bareLinked, "./test/bench/bare"},
	}
	if latchkey == "" {
		latchkey = filepath.Join(dir, "latchkey")
		steps = append(steps, []string{"build", "-trimpath", "-o", latchkey, "."})
	}
	for _, args := range steps {
		cmd := exec.Command("go", args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return "", "", "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
		}
	}
	return latchkey, bare, bareLinked, nil
}

// startBare starts the bare Echo handler.
func startBare(bin string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p, err := spawn("bare", "http://"+addr, exec.Command(bin, "-addr", addr))
	if err != nil {
		return nil, err
	}
	return p, p.waitReady("/")
}

// startBareBeside starts the bare handler built with -tags linked, holding
// a latchkey App configured as the SQLite database instance (its own data
// folder under dir), never served.
func startBareBeside(bin, dir string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	home, confPath, err := writeConfig(dir, "bare-beside", "database")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-addr", addr, "-beside", confPath)
	cmd.Dir, cmd.Env = home, latchkeyEnv(home, "http://"+addr, "")
	p, err := spawn("bare-beside", "http://"+addr, cmd)
	if err != nil {
		return nil, err
	}
	return p, p.waitReady("/")
}

// startLatchkey starts latchkey with the session strategy given, its own
// data folder under dir, e-mail sign-in with links written to the log and
// no rate limits; dbURL "" means SQLite in the data folder.
func startLatchkey(bin, dir, name, strategy, dbURL string, sessionYAML ...string) (*proc, error) {
	return startLatchkeyWith(bin, dir, name, strategy, dbURL, "", sessionYAML...)
}

// startLatchkeyWith is startLatchkey with topYAML added to the config at
// its top level (e.g. an oidc: section).
func startLatchkeyWith(bin, dir, name, strategy, dbURL, topYAML string, sessionYAML ...string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	home, confPath, err := writeConfig(dir, name, strategy, sessionYAML...)
	if err != nil {
		return nil, err
	}
	if topYAML != "" {
		f, err := os.OpenFile(confPath, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		_, err = f.WriteString(topYAML)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	origin := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "--config", confPath)
	cmd.Dir, cmd.Env = home, append(latchkeyEnv(home, origin, dbURL), "PORT="+strconv.Itoa(port))
	p, err := spawn(name, origin, cmd)
	if err != nil {
		return nil, err
	}
	return p, p.waitReady(basePath + "/csrf")
}

// writeConfig writes the configuration of a bench instance named name into
// its own folder under dir: e-mail sign-in with no rate limits, the
// session strategy given, then sessionYAML's lines under session:.
func writeConfig(dir, name, strategy string, sessionYAML ...string) (home, path string, err error) {
	home = filepath.Join(dir, name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", "", err
	}
	conf := fmt.Sprintf(`data_dir: %q
providers:
  - id: email
    type: email
    rate_limit:
      disabled: true
session:
  strategy: %s
%s`, filepath.Join(home, "data"), strategy, indented(sessionYAML))
	path = filepath.Join(home, "config.yaml")
	return home, path, os.WriteFile(path, []byte(conf), 0o600)
}

// latchkeyEnv is a bench instance's whole environment; dbURL "" means SQLite.
func latchkeyEnv(home, origin, dbURL string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"SERVICE_URL=" + origin + basePath,
		"AUTH_SECRET=" + benchSecret,
		"DATABASE_URL=" + dbURL,
		"LOG_LEVEL=info",
	}
}

// indented is YAML lines under session:.
func indented(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

func spawn(name, origin string, cmd *exec.Cmd) (*proc, error) {
	p := &proc{Name: name, Origin: origin, cmd: cmd, logs: &logBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	// Killed with the harness, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// waitReady waits until path answers 200, failing at once if the process exits.
func (p *proc) waitReady(path string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%s) before answering; log:\n%s", p.Name, p.cmd.ProcessState, p.logs)
		default:
		}
		if res, err := client.Get(p.Origin + path); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer %s within 30s; log:\n%s", p.Name, path, p.logs)
}

// stop ends the process: SIGTERM, then SIGKILL after 15 s.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// mem is the process's resident set now and at its peak, in KiB, from
// /proc/PID/status (VmRSS, VmHWM).
func (p *proc) mem() (rss, peak int64) {
	st := procfs.Status(p.cmd.Process.Pid)
	return st["VmRSS"], st["VmHWM"]
}

// cpu is the CPU time the process has used so far (user and system), from
// /proc/PID/stat in clock ticks (100 per second on Linux).
func (p *proc) cpu() time.Duration {
	st, err := procfs.ReadStat(p.cmd.Process.Pid)
	if err != nil {
		return 0
	}
	return time.Duration(st.CPU()) * (time.Second / 100)
}

// fds is the number of open file descriptors of the process, and how many
// of them are sockets (the rest: database files, pipes, ...).
func (p *proc) fds() (all, sockets int) {
	dir := fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			sockets++
		}
	}
	return len(ents), sockets
}

// logBuffer is a process's log: the first 4 MiB kept whole (start-up,
// the sign-in links), and every problem line (WARN, ERROR, panic) picked
// out as it arrives, however long the run. Under load the access log fills
// the 4 MiB within a second or two, and a problem logged after that must
// still fail the run.
type logBuffer struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	partial  []byte    // the last line written, until its newline comes
	lines    int       // complete lines seen
	problems []problem // at most maxProblems
}

// problem is a problem line and the number of lines seen before it.
type problem struct {
	seq  int
	line string
}

const maxProblems = 100

func (l *logBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() < 4<<20 {
		l.buf.Write(b)
	}
	rest := b
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.partial = append(l.partial, rest...)
			break
		}
		line := rest[:i]
		if len(l.partial) > 0 {
			line = append(l.partial, line...)
			l.partial = l.partial[:0]
		}
		if isProblem(string(line)) && len(l.problems) < maxProblems {
			l.problems = append(l.problems, problem{l.lines, string(line)})
		}
		l.lines++
		rest = rest[i+1:]
	}
	return len(b), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// mark is the number of complete lines logged so far, for problems.
func (l *logBuffer) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}

// problemsSince are the problem lines logged after mark.
func (l *logBuffer) problemsSince(mark int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.problems {
		if p.seq >= mark {
			out = append(out, p.line)
		}
	}
	return out
}

// isProblem: a WARN or ERROR line or a panic. A request whose client had
// gone (wrk closes its connections mid-request when a run ends, which
// cancels the request's context) is logged at info with client_gone=true
// when the cancellation was its failure (docs/operations.md), so no line
// is excused by its text.
func isProblem(line string) bool {
	return strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") || strings.Contains(line, "panic")
}

func freePort() (int, error) {
	p, err := testport.Free()
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	return p, nil
}

// startPostgres starts a throwaway PostgreSQL cluster (models/pgtest, as the
// tests do; or the server named by LATCHKEY_TEST_POSTGRES_URL) and creates a
// database for the run. stop drops it and ends the cluster.
func startPostgres() (dbURL string, stop func(), err error) {
	srv, stopServer, err := pgtest.Start()
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL (test/bench/install.sh installs it with BENCH_POSTGRES=1): %w", err)
	}
	admin, err := sql.Open("pgx", srv.AdminURL)
	if err != nil {
		stopServer()
		return "", nil, err
	}
	name := "bench_" + random.Hex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close()
		stopServer()
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	u, err := url.Parse(srv.AdminURL)
	if err != nil {
		_ = admin.Close()
		stopServer()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = admin.Close()
		stopServer()
	}, nil
}
