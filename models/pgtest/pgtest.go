// Package pgtest gives tests a real PostgreSQL server: the one named by
// LATCHKEY_TEST_POSTGRES_URL (a server of yours, to save the start-up), or
// else a throwaway cluster of its own, one per test package (as under
// `go tool task test`), started with the machine's initdb and pg_ctl. PostgreSQL refuses to run as root, so as
// root the cluster runs as the unprivileged "postgres" user. Every test
// gets a fresh database, dropped when it ends. A test that stops and
// starts the server under a running client owns a cluster (StartCluster).
package pgtest

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
	"sync"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/test/testport"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/latchkey-auth/latchkey/app/random"
)

// EnvURL names an existing server's admin URL (a superuser, any database).
const EnvURL = "LATCHKEY_TEST_POSTGRES_URL"

// Server is a running PostgreSQL cluster.
type Server struct {
	// AdminURL connects as the cluster's superuser to the postgres database.
	AdminURL string
	dir      string // the cluster's data folder ("" when not ours)
	asUser   string // run pg_ctl as this user ("" = as ourselves)
	pgCtl    string
	opts     string // postgres options (port, socket folder, settings) for pg_ctl start
}

// Start returns the server named by LATCHKEY_TEST_POSTGRES_URL, or starts
// a throwaway cluster. stop ends a cluster Start made (a no-op otherwise).
func Start() (s *Server, stop func(), err error) {
	if u := os.Getenv(EnvURL); u != "" {
		return &Server{AdminURL: u}, func() {}, nil
	}
	s, err = startCluster()
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

// StartCluster starts a throwaway cluster of the caller's own, whatever
// LATCHKEY_TEST_POSTGRES_URL says, for a test that stops and starts the
// server (Stop, Start) under a running client: doing that to a shared
// server would break every other test on it. Close removes it.
func StartCluster() (*Server, error) { return startCluster() }

// Stop shuts the cluster down as an operator would for a restart (pg_ctl
// stop -m fast: clients are disconnected, the data is kept); Start starts
// it again on the same port. Only a cluster this package started can be
// stopped.
func (s *Server) Stop() error {
	if s.dir == "" {
		return errors.New("pgtest: not our cluster, cannot stop it")
	}
	if out, err := s.run(s.pgCtl, "-D", filepath.Join(s.dir, "data"), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

// Start starts a cluster stopped by Stop, on the same port and with the same
// settings, and waits until it accepts connections.
func (s *Server) Start() error {
	if s.dir == "" {
		return errors.New("pgtest: not our cluster, cannot start it")
	}
	if out, err := s.run(s.pgCtl, "-D", filepath.Join(s.dir, "data"), "-l", filepath.Join(s.dir, "log"), "-o", s.opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pg_ctl start: %w: %s %s", err, out, log)
	}
	return nil
}

// Close stops a cluster this package started and removes its data; for a
// server named by LATCHKEY_TEST_POSTGRES_URL it does nothing.
func (s *Server) Close() {
	if s.dir == "" {
		return
	}
	_, _ = s.run(s.pgCtl, "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	s.cleanup()
}

// Main runs a package's tests with a PostgreSQL server shared by them all,
// reachable through URL; use it from TestMain.
func Main(m *testing.M, url *string) int {
	s, stop, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest: no PostgreSQL server:", err)
		return 1
	}
	defer stop()
	*url = s.AdminURL
	return m.Run()
}

// Shared is one server for the tests of a package of which only some need
// PostgreSQL: started on first use, so the others run without one. Call
// Stop from TestMain after m.Run.
type Shared struct {
	once sync.Once
	url  string
	stop func()
	err  error
}

// URL starts the server on first use and returns its admin URL; without
// a server it fails t.
func (s *Shared) URL(t testing.TB) string {
	t.Helper()
	s.once.Do(func() {
		var srv *Server
		if srv, s.stop, s.err = Start(); s.err == nil {
			s.url = srv.AdminURL
		}
	})
	if s.err != nil {
		t.Fatalf("pgtest: no PostgreSQL server: %v", s.err)
	}
	return s.url
}

// Stop ends the server URL started, if any.
func (s *Shared) Stop() {
	if s.stop != nil {
		s.stop()
	}
}

// productionCollation makes a test database compare text as most
// production servers do (ICU's en-US), not as the test cluster's "C": in
// en-US ';' sorts before ':' and punctuation apart from byte order, so a
// query that leans on byte order (a prefix as a range, a LIKE served by an
// index) fails its tests here as it would in production.
const productionCollation = "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"

// NewDatabase creates a fresh database (productionCollation) on the server
// at adminURL and returns its URL; it is dropped when t ends.
func NewDatabase(t testing.TB, adminURL string) string {
	t.Helper()
	return newDatabase(t, adminURL, productionCollation)
}

// newDatabase creates a database with options, dropped when t ends.
func newDatabase(t testing.TB, adminURL, options string) string {
	t.Helper()
	if _, err := url.Parse(adminURL); err != nil {
		t.Fatalf("pgtest: admin url: %v", err)
	}
	name := "t_" + random.Hex(8)
	if err := createDatabase(adminURL, name, options); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = dropDatabase(adminURL, name) })
	return databaseURL(adminURL, name)
}

// Template makes databases that start prepared (migrated): Prepare runs
// once per server, on a database of its own (productionCollation), and
// each NewDatabase copies that one (CREATE DATABASE ... TEMPLATE), which
// is much cheaper than migrating every test's database again. Prepare
// must close its connections before it returns: PostgreSQL copies no
// database another session is connected to. Tests that need an empty or
// an old schema use the package's NewDatabase. Call Drop from TestMain
// after m.Run, before the server stops.
type Template struct {
	// Prepare brings the database at dbURL to the state every copy
	// starts in.
	Prepare func(dbURL string) error

	mu   sync.Mutex
	made map[string]*prepared // by admin URL
}

// prepared is a server's template database, made on first use.
type prepared struct {
	once sync.Once
	name string
	err  error
}

// NewDatabase creates a copy of the server's template database (making
// the template first, once) and returns its URL; it is dropped when t
// ends.
func (tp *Template) NewDatabase(t testing.TB, adminURL string) string {
	t.Helper()
	tp.mu.Lock()
	if tp.made == nil {
		tp.made = map[string]*prepared{}
	}
	p := tp.made[adminURL]
	if p == nil {
		p = &prepared{}
		tp.made[adminURL] = p
	}
	tp.mu.Unlock()
	p.once.Do(func() {
		p.name = "tpl_" + random.Hex(8)
		if p.err = createDatabase(adminURL, p.name, productionCollation); p.err == nil {
			p.err = tp.Prepare(databaseURL(adminURL, p.name))
		}
	})
	if p.err != nil {
		t.Fatalf("pgtest: template database: %v", p.err)
	}
	return newDatabase(t, adminURL, "TEMPLATE "+p.name)
}

// Drop removes the template databases NewDatabase made.
func (tp *Template) Drop() {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for adminURL, p := range tp.made {
		if p.name != "" {
			_ = dropDatabase(adminURL, p.name)
		}
	}
	tp.made = nil
}

// createDatabase runs CREATE DATABASE name with options on the server.
func createDatabase(adminURL, name, options string) error {
	if err := adminExec(adminURL, "CREATE DATABASE "+name+" "+options); err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	return nil
}

// dropDatabase drops name on the server, disconnecting its sessions.
func dropDatabase(adminURL, name string) error {
	return adminExec(adminURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}

// adminExec runs stmt as the server's superuser, on a connection of its
// own that it closes (a template must have none left).
func adminExec(adminURL, stmt string) error {
	admin, err := sql.Open("pgx", adminURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = admin.ExecContext(ctx, stmt)
	return err
}

// databaseURL is adminURL with its database replaced by name.
func databaseURL(adminURL, name string) string {
	u, err := url.Parse(adminURL)
	if err != nil {
		return adminURL // unreachable for the URLs Start returns; a connect then fails
	}
	u.Path = "/" + name
	return u.String()
}

// binDir finds initdb and pg_ctl: on the PATH, else Debian's folder.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return "", errors.New("initdb not found (install Debian's postgresql package)")
	}
	return filepath.Dir(matches[len(matches)-1]), nil
}

func startCluster() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "latchkey-pg-")
	if err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	s := &Server{dir: dir, pgCtl: filepath.Join(bin, "pg_ctl")}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		s.asUser = "postgres"
		u, err := user.Lookup(s.asUser)
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL refuses root and there is no %q user: %w", s.asUser, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("chown data folder: %w", err)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"); err != nil {
		s.cleanup()
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	s.opts = fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300", port, dir)
	if err := s.Start(); err != nil {
		s.cleanup()
		return nil, err
	}
	s.AdminURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return s, nil
}

func (s *Server) cleanup() { _ = os.RemoveAll(s.dir) }

// run runs a PostgreSQL program, as the unprivileged user when we are root.
func (s *Server) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(prog, args...)
	if s.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", s.asUser, "--", prog}, args...)...)
	}
	cmd.Dir = os.TempDir()
	return cmd.CombinedOutput()
}

func freePort() (int, error) {
	p, err := testport.Free()
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	return p, nil
}
