// Package pghatest gives tests a real high-availability PostgreSQL: a
// pg_auto_failover formation of one monitor and two data nodes on loopback
// ports, with synchronous replication, that a test can fail over (kill -9
// of the primary's host, a planned switchover) and heal (the old primary
// rejoins as a standby). PostgreSQL refuses to run as root, so as root
// every process runs as the unprivileged "postgres" user; everything lives
// in one temporary folder, removed with the processes when the test ends.
//
// It needs Debian's pg-auto-failover-cli and postgresql-15-auto-failover
// packages (install.sh installs them).
package pghatest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/test/testport"
)

const (
	autoctl = "/usr/bin/pg_autoctl"
	// Database and User are the database the formation serves and the
	// password-authenticated role that owns it: latchkey's DATABASE_URL.
	Database = "latchkey"
	User     = "latchkey"
	// formation is pg_auto_failover's default formation, group 0.
	formation = "default"
)

// Options shape a cluster; the zero value is fine.
type Options struct {
	// Password is the latchkey role's password; "": a random one.
	Password string
}

// Node is one data node: a PostgreSQL server and the pg_autoctl keeper
// that runs it, as on a host of its own.
type Node struct {
	Name string // as registered on the monitor: node1, node2
	Port int
	dir  string // PGDATA
	log  string // the keeper's log file
	svc  *service
}

func (n *Node) String() string { return fmt.Sprintf("%s (127.0.0.1:%d)", n.Name, n.Port) }

// Cluster is a running pg_auto_failover formation.
type Cluster struct {
	dir       string
	run       *runner
	superuser string // PostgreSQL's superuser: the user the servers run as
	password  string

	monitorPort int
	monitorDir  string
	monitorLog  string
	monitor     *service
	monitorDB   *sql.DB

	nodes []*Node
}

// Start starts a cluster for t, waits until it is healthy (a primary and
// a synchronous standby) and stops it when t ends, whatever happened.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := New(ctx, o)
	if err != nil {
		t.Fatalf("pghatest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pghatest: the cluster at the end of the test:\n%s", c.Report())
		}
		if err := c.Close(); err != nil {
			t.Errorf("pghatest: %v", err)
		}
	})
	return c
}

// New starts a cluster and waits until it is healthy; Close stops it. For
// TestMain; a test uses Start.
func New(ctx context.Context, o Options) (c *Cluster, err error) {
	if _, err := os.Stat(autoctl); err != nil {
		return nil, fmt.Errorf("pg_autoctl not installed (models/pghatest/install.sh): %w", err)
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "latchkey-pgha-")
	if err != nil {
		return nil, fmt.Errorf("temporary folder: %w", err)
	}
	c = &Cluster{dir: dir, run: &runner{dir: dir, bin: bin}, password: o.Password}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, c.Report())
			_ = c.Close()
			c = nil
		}
	}()
	if c.password == "" {
		c.password = random.Hex(16)
	}
	if err := c.setUser(); err != nil {
		return c, err
	}
	if err := c.startMonitor(ctx); err != nil {
		return c, err
	}
	for i := range 2 {
		if err := c.addNode(ctx, i+1); err != nil {
			return c, err
		}
		if i == 0 {
			if err := c.createRole(ctx); err != nil {
				return c, err
			}
		}
	}
	return c, c.WaitHealthy(ctx)
}

// setUser picks the user the servers run as (postgres when we are root)
// and gives it the cluster's folder.
func (c *Cluster) setUser() error {
	for _, sub := range []string{"config", "share", "run"} {
		if err := os.Mkdir(filepath.Join(c.dir, sub), 0o700); err != nil {
			return fmt.Errorf("folder: %w", err)
		}
	}
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return fmt.Errorf("current user: %w", err)
		}
		c.superuser = u.Username
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("PostgreSQL refuses root and there is no postgres user (models/pghatest/install.sh): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c.superuser = "postgres"
	c.run.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	err = filepath.WalkDir(c.dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	})
	if err != nil {
		return fmt.Errorf("chown %s: %w", c.dir, err)
	}
	// Postgres puts its Unix socket in Debian's default folder, which the
	// postgresql-common package makes and a reboot may have removed.
	if err := os.MkdirAll("/var/run/postgresql", 0o2775); err != nil {
		return fmt.Errorf("socket folder: %w", err)
	}
	return os.Chown("/var/run/postgresql", uid, gid)
}

// startMonitor creates the monitor, tuned (tuning.go), and runs it.
func (c *Cluster) startMonitor(ctx context.Context) error {
	port, err := testport.Free()
	if err != nil {
		return err
	}
	c.monitorPort = port
	c.monitorDir = filepath.Join(c.dir, "monitor")
	c.monitorLog = filepath.Join(c.dir, "monitor.log")
	if err := c.logged(c.monitorLog, "create", "monitor", "--pgdata", c.monitorDir, "--pgport", strconv.Itoa(port),
		"--pgctl", filepath.Join(c.run.bin, "pg_ctl"), "--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl"); err != nil {
		return err
	}
	// Loopback only: `create monitor` has no --listen.
	if err := c.logged(c.monitorLog, "config", "set", "--pgdata", c.monitorDir, "postgresql.listen_addresses", "127.0.0.1"); err != nil {
		return err
	}
	if err := appendSettings(c.monitorDir, monitorSettings()); err != nil {
		return err
	}
	if c.monitor, err = c.run.start(c.monitorLog, "run", "--pgdata", c.monitorDir); err != nil {
		return err
	}
	if c.monitorDB, err = sql.Open("pgx", c.MonitorURL()); err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	return c.until(ctx, "the monitor answers", func(ctx context.Context) (bool, error) {
		return c.monitorDB.PingContext(ctx) == nil, nil
	})
}

// addNode creates data node i and runs its keeper: the first becomes the
// primary ("single" until the second joins), the second its standby.
// `create postgres` without --run only registers the node and prepares
// Postgres, so that the keeper's time-outs, the HBA rule and the settings
// are in place before the keeper first starts it.
func (c *Cluster) addNode(ctx context.Context, i int) error {
	port, err := testport.Free()
	if err != nil {
		return err
	}
	n := &Node{Name: "node" + strconv.Itoa(i), Port: port, dir: filepath.Join(c.dir, "node"+strconv.Itoa(i))}
	n.log = filepath.Join(c.dir, n.Name+".log")
	c.nodes = append(c.nodes, n)
	if err := c.logged(n.log, "create", "postgres", "--pgdata", n.dir, "--pgport", strconv.Itoa(port),
		"--pgctl", filepath.Join(c.run.bin, "pg_ctl"), "--listen", "127.0.0.1", "--hostname", "127.0.0.1",
		"--name", n.Name, "--dbname", Database, "--monitor", c.MonitorURL(), "--auth", "trust", "--no-ssl"); err != nil {
		return err
	}
	for _, s := range keeperSettings() {
		if err := c.logged(n.log, "config", "set", "--pgdata", n.dir, s.name, s.value); err != nil {
			return err
		}
	}
	if i == 1 {
		// The standby is a copy of the primary (pg_basebackup, later
		// pg_rewind): the rule and the settings reach it from here.
		if err := prependHBA(n.dir); err != nil {
			return err
		}
		if err := appendSettings(n.dir, nodeSettings()); err != nil {
			return err
		}
	}
	if n.svc, err = c.run.start(n.log, "run", "--pgdata", n.dir); err != nil {
		return err
	}
	if i == 1 {
		_, err := c.WaitPrimary(ctx)
		return err
	}
	return nil
}

// hbaRule makes the latchkey role give its password over TCP: pg_autoctl's
// initdb trusts every loopback connection (its own roles need no
// password here), and the first matching line wins.
const hbaRule = "host " + Database + " " + User + " 127.0.0.1/32 scram-sha-256 # latchkey: password required\n"

func prependHBA(pgdata string) error {
	p := filepath.Join(pgdata, "pg_hba.conf")
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("pg_hba.conf: %w", err)
	}
	if strings.Contains(string(b), hbaRule) {
		return nil
	}
	return writeKeepingOwner(p, append([]byte(hbaRule), b...))
}

// appendSettings adds settings to postgresql.auto.conf, which PostgreSQL
// reads last: they override pg_autoctl's postgresql-auto-failover.conf.
func appendSettings(pgdata string, settings []setting) error {
	p := filepath.Join(pgdata, "postgresql.auto.conf")
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("postgresql.auto.conf: %w", err)
	}
	for _, s := range settings {
		b = append(b, fmt.Sprintf("%s = %s\n", s.name, s.value)...)
	}
	return writeKeepingOwner(p, b)
}

// writeKeepingOwner rewrites a file in place: its owner (postgres) and
// mode stay.
func writeKeepingOwner(p string, b []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// createRole makes the latchkey role, with its password, the owner of the
// database and its public schema; on the primary, so the standby gets it
// by replication.
func (c *Cluster) createRole(ctx context.Context) error {
	primary := c.nodes[0]
	for _, step := range []struct{ db, stmt string }{
		{"postgres", "CREATE ROLE " + User + " LOGIN PASSWORD " + quote(c.password)},
		{"postgres", "ALTER DATABASE " + Database + " OWNER TO " + User},
		{Database, "ALTER SCHEMA public OWNER TO " + User},
	} {
		if err := c.exec(ctx, primary, step.db, step.stmt); err != nil {
			return fmt.Errorf("latchkey role: %w", err)
		}
	}
	return nil
}

// quote is a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// URL is latchkey's DATABASE_URL: both nodes, the one that takes writes
// chosen at each connection (target_session_attrs=read-write).
func (c *Cluster) URL() string {
	hosts := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		hosts[i] = "127.0.0.1:" + strconv.Itoa(n.Port)
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(User, c.password), Host: strings.Join(hosts, ","), Path: "/" + Database}
	return u.String() + "?target_session_attrs=read-write"
}

// Password is the latchkey role's password.
func (c *Cluster) Password() string { return c.password }

// MonitorURL is the monitor's database, as pg_autoctl's nodes reach it.
func (c *Cluster) MonitorURL() string {
	return fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", c.monitorPort)
}

// adminURL reaches one node as the superuser (trusted on loopback).
func (c *Cluster) adminURL(n *Node, db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=5", c.superuser, n.Port, db)
}

// Nodes are the data nodes, node1 first.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Kill ends a node's whole process tree with SIGKILL — its pg_autoctl
// keeper and its Postgres — as when its host dies. Nothing reports the
// death: the monitor finds out by its health checks and the keeper's
// silence (tuning.go), then fails over.
func (c *Cluster) Kill(n *Node) error {
	if n.svc == nil {
		return fmt.Errorf("%s is not running", n)
	}
	if err := n.svc.kill(); err != nil {
		return fmt.Errorf("kill %s: %w", n, err)
	}
	return nil
}

// KillPostgres sends SIGKILL to a node's postmaster only; its keeper lives.
//
// Observed with pg_auto_failover 2.0 (every time we tried): the keeper
// starts Postgres again in place within about 1.3 s (crash recovery), but
// its report in between says "Postgres is not running", and for the
// monitor that alone makes the node unhealthy: with a healthy synchronous
// standby it fails over at once (about 1 s after the kill), and the
// restarted old primary, asked to, demotes itself, is rewound and follows
// as a standby by itself. So this is a fail-over too, a quicker one than
// Kill (no waiting for silence or the demote time-out): writes are back on
// the other node about 2 s after the kill, the formation whole about 6 s
// after. Kill is the host's death; this is Postgres' crash on a live host.
func (c *Cluster) KillPostgres(n *Node) error {
	b, err := os.ReadFile(filepath.Join(n.dir, "postmaster.pid"))
	if err != nil {
		return fmt.Errorf("kill postgres of %s: %w", n, err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		return fmt.Errorf("kill postgres of %s: postmaster.pid: %w", n, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill postgres of %s: %w", n, err)
	}
	return nil
}

// Rejoin starts a killed node's keeper again. The monitor has demoted it:
// the keeper runs crash recovery, rewinds it onto the new primary's
// timeline (pg_rewind; a fresh pg_basebackup when that fails) and it
// follows as a standby. WaitHealthy waits for that.
func (c *Cluster) Rejoin(n *Node) error {
	if n.svc != nil && n.svc.running() {
		return fmt.Errorf("%s is running", n)
	}
	svc, err := c.run.start(n.log, "run", "--pgdata", n.dir)
	if err != nil {
		return fmt.Errorf("rejoin %s: %w", n, err)
	}
	n.svc = svc
	return nil
}

// Switchover asks the monitor for a planned fail-over (pg_autoctl perform
// switchover) and waits until it is done: the primary drains and demotes
// itself, the standby is promoted, the old primary follows it.
//
// The monitor's perform_failover() may meet a deadlock with the nodes'
// own calls to it on a loaded machine (seen: "Monitor ERROR: deadlock
// detected"); PostgreSQL then rolled that call back, nothing was started,
// and it is asked again, as an operator would.
func (c *Cluster) Switchover(ctx context.Context) error {
	for try := 1; ; try++ {
		cmd := c.run.command("perform", "switchover", "--monitor", c.MonitorURL(), "--wait", "60")
		out, err := runContext(ctx, cmd)
		switch {
		case err == nil:
			return nil
		case try < 3 && strings.Contains(out, "deadlock detected"):
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		default:
			return fmt.Errorf("pg_autoctl perform switchover: %w: %s", err, tail(out, 30))
		}
	}
}

// Close stops every process of the cluster (a fast shutdown, then SIGKILL
// for any that lingers) and removes its folder.
func (c *Cluster) Close() error {
	var errs []error
	if c.monitorDB != nil {
		errs = append(errs, c.monitorDB.Close())
	}
	for _, n := range c.nodes {
		if n.svc != nil {
			errs = append(errs, n.svc.stop(30*time.Second))
		}
	}
	if c.monitor != nil {
		errs = append(errs, c.monitor.stop(30*time.Second))
	}
	for _, d := range append([]string{c.monitorDir}, c.nodeDirs()...) {
		removeStaleSharedMemory(d)
	}
	errs = append(errs, os.RemoveAll(c.dir))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

func (c *Cluster) nodeDirs() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, n.dir)
	}
	return out
}

// removeStaleSharedMemory removes the System V shared memory segment a
// postmaster killed with SIGKILL left behind (a fast shutdown removes its
// own; a restart on the same folder would have): its id is on the 7th
// line of the postmaster.pid it left too.
func removeStaleSharedMemory(pgdata string) {
	if pgdata == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(pgdata, "postmaster.pid"))
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 7 {
		return
	}
	if f := strings.Fields(lines[6]); len(f) == 2 {
		if _, err := strconv.Atoi(f[1]); err == nil {
			_ = exec.Command("ipcrm", "-m", f[1]).Run()
		}
	}
}

// logged runs a pg_autoctl command to its end, its output appended to a
// log file.
func (c *Cluster) logged(logPath string, args ...string) error {
	out, err := c.run.run(args...)
	if f, ferr := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); ferr == nil {
		_, _ = f.WriteString(out)
		_ = f.Close()
	}
	return err
}

// exec runs one statement on a node as the superuser.
func (c *Cluster) exec(ctx context.Context, n *Node, db, stmt string) error {
	conn, err := sql.Open("pgx", c.adminURL(n, db))
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("%s on %s: %w", strings.SplitN(stmt, " PASSWORD", 2)[0], n, err)
	}
	return nil
}

// runContext runs cmd, killing it when ctx ends.
func runContext(ctx context.Context, cmd *exec.Cmd) (string, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return out.String(), ctx.Err()
	}
}

// binDir is PostgreSQL's bin folder: pg_auto_failover's packages are built
// for Debian's PostgreSQL 15.
func binDir() (string, error) {
	const debian15 = "/usr/lib/postgresql/15/bin"
	if _, err := os.Stat(filepath.Join(debian15, "pg_ctl")); err == nil {
		return debian15, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(matches) == 0 {
		return "", errors.New("pg_ctl not found (install Debian's postgresql-15)")
	}
	return filepath.Dir(matches[len(matches)-1]), nil
}
