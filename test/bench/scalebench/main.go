// Command scalebench is `go tool task bench:scale` (issue #36): latchkey's
// cost as its tables grow. For each dialect (SQLite; PostgreSQL with
// BENCH_POSTGRES=1) it fills a fresh database of each size (10³ sessions
// and the full size) by bulk INSERT (models/scalefill), starts the real
// binary on each (database sessions, lookup cache off) and measures,
// beside the bare Echo handler (test/bench/bare) in the same run, the
// loads in rounds in which the two sizes take turns (BENCH_ROUNDS):
// start-up to /health/ready, GET /session and forward-auth signed in with
// a random live session per request, the purge of the expired half under
// GET /session load (its duration, GET /session's p99 before and during,
// and the longest a sign-in's session insert waited meanwhile), the admin
// listings' first and hundredth page, `users delete` of a user with many
// sessions, sign-in round trips (e-mail link through a real SMTP server,
// password, OAuth callback through a real OpenID Connect provider) of
// filled users, the CPU per request of latchkey and PostgreSQL during
// each load, and latchkey's RSS (anonymous and file-backed) after the
// load. It prints Markdown tables.
//
// The full size is models/scalefill.Default (10⁶ users, 10⁷ sessions, ...)
// times BENCH_SCALE (default 1); the load is Go HTTP clients (-connections;
// -signin-connections for the sign-ins) for -duration per measurement.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/adminstore"
	"github.com/latchkey-auth/latchkey/models/pgtest"
	"github.com/latchkey-auth/latchkey/models/scalefill"
	"github.com/latchkey-auth/latchkey/test/testport"
)

type options struct {
	Scale    float64
	Duration time.Duration
	// Rounds is how many times each size's loads run, the sizes taking
	// turns: on 2 shared cores one 5-second load moves by as much as the
	// difference being measured.
	Rounds   int
	Conns    int
	Postgres bool
	Small    int
	NoSQLite bool
	// SignInConns is the sign-ins' clients: a few, as sign-ins are rare
	// beside session reads, and the password one's Argon2id (19 MiB, at
	// most 2 × CPUs at once) would only queue behind more.
	SignInConns int
	// PurgeFor bounds the measured purge (0: until every expired row is
	// gone). SQLite's purge leaves the lock free most of the time and
	// deletes ~1 500 rows/s, so the 5×10⁶ expired sessions of the full size
	// would take about an hour; a bounded purge reports its rate instead.
	PurgeFor time.Duration
	// PGSharedBuffers, when set, is PostgreSQL's shared_buffers for the
	// run (its default is 128 MB, against ~7 GB of tables at the full
	// size): an operator sizes it to the indexes the lookups read.
	PGSharedBuffers string
	// PGHugePages makes PostgreSQL map shared_buffers in huge pages
	// (huge_pages = on: it will not start without them), which the
	// machine must have reserved (vm.nr_hugepages). With 4 KiB pages each
	// backend takes a page fault on its first touch of every page of the
	// buffers, which at gigabytes of buffers and a fresh connection pool
	// is most of what a lookup costs the kernel.
	PGHugePages bool
	// PGSet are more of PostgreSQL's settings for the run, name=value
	// (BENCH_PG_SET, separated by ";"), such as wal_compression=lz4.
	PGSet []string
	// PerfDir, when set, receives latchkey's CPU profile of each load of
	// the last round (perf.go; BENCH_PERF).
	PerfDir string
	// PinSQLite keeps each SQLite file in the OS's page cache for the
	// run (pin.go; BENCH_SQLITE_PIN=1).
	PinSQLite bool
}

func main() {
	var o options
	fs := flag.NewFlagSet("scalebench", flag.ExitOnError)
	fs.Float64Var(&o.Scale, "scale", envFloat("BENCH_SCALE", 1), "full size = scalefill.Default (10⁶ users, 10⁷ sessions) × this (BENCH_SCALE)")
	fs.DurationVar(&o.Duration, "duration", envDuration("BENCH_DURATION", 5*time.Second), "load per measurement (BENCH_DURATION)")
	fs.IntVar(&o.Rounds, "rounds", envInt("BENCH_ROUNDS", 3), "interleaved rounds of the loads (BENCH_ROUNDS)")
	fs.IntVar(&o.Conns, "connections", envInt("BENCH_CONNECTIONS", 16), "concurrent clients (BENCH_CONNECTIONS)")
	fs.BoolVar(&o.Postgres, "postgres", os.Getenv("BENCH_POSTGRES") == "1", "also PostgreSQL (BENCH_POSTGRES=1)")
	fs.IntVar(&o.Small, "small", 1000, "sessions of the small size")
	fs.BoolVar(&o.NoSQLite, "no-sqlite", os.Getenv("BENCH_NO_SQLITE") == "1", "PostgreSQL only (BENCH_NO_SQLITE=1)")
	fs.IntVar(&o.SignInConns, "signin-connections", envInt("BENCH_SIGNIN_CONNECTIONS", 4), "concurrent clients of the sign-in round trips (BENCH_SIGNIN_CONNECTIONS)")
	fs.DurationVar(&o.PurgeFor, "purge-for", envDuration("BENCH_PURGE_FOR", 0), "stop the measured purge after this long, 0: when done (BENCH_PURGE_FOR)")
	fs.BoolVar(&o.PGHugePages, "pg-huge-pages", os.Getenv("BENCH_PG_HUGE_PAGES") == "1", "PostgreSQL's shared_buffers in huge pages, reserved beforehand with sysctl vm.nr_hugepages (BENCH_PG_HUGE_PAGES=1)")
	fs.StringVar(&o.PGSharedBuffers, "pg-shared-buffers", os.Getenv("BENCH_PG_SHARED_BUFFERS"), "PostgreSQL's shared_buffers, e.g. 4GB; empty: its default, 128MB (BENCH_PG_SHARED_BUFFERS)")
	fs.BoolVar(&o.PinSQLite, "sqlite-pin", os.Getenv("BENCH_SQLITE_PIN") == "1", "keep each SQLite file in the page cache (mlock) for the run (BENCH_SQLITE_PIN=1)")
	fs.StringVar(&o.PerfDir, "perf", os.Getenv("BENCH_PERF"), "record latchkey's CPU profile (Linux perf) of each load of the last round into this directory (BENCH_PERF)")
	pgSet := fs.String("pg-set", os.Getenv("BENCH_PG_SET"), "more PostgreSQL settings, name=value;… e.g. wal_compression=lz4 (BENCH_PG_SET)")
	if len(os.Args) > 1 && os.Args[1] == probeCommand {
		if err := insertProbeMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "scalebench: insert probe:", err)
			os.Exit(1)
		}
		return
	}
	_ = fs.Parse(os.Args[1:])
	for _, e := range strings.Split(*pgSet, ";") {
		if strings.TrimSpace(e) != "" {
			o.PGSet = append(o.PGSet, strings.TrimSpace(e))
		}
	}
	if o.Rounds < 1 {
		fmt.Fprintln(os.Stderr, "scalebench: BENCH_ROUNDS must be at least 1")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench: FAILED:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "scalebench: "+format+"\n", args...) }

func run(o options) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return errors.New("run from the repository root (go tool task bench:scale)")
	}
	dir, err := os.MkdirTemp("", "latchkey-scalebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, bareBin := filepath.Join(dir, "latchkey"), filepath.Join(dir, "bare")
	for _, args := range [][]string{{"build", "-trimpath", "-o", bin, "."}, {"build", "-o", bareBin, "./test/bench/bare"}} {
		cmd := exec.Command("go", args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
		}
	}
	bare, err := startProc("bare", bareBin, nil, "", "-addr")
	if err != nil {
		return err
	}
	defer bare.stop()
	h := &harness{o: o, dir: dir, bin: bin, bare: bare, box: newMailbox()}
	if h.smtp, err = smtptest.Listen(smtptest.Options{OnMail: h.box.deliver}); err != nil {
		return fmt.Errorf("SMTP server: %w", err)
	}
	defer h.smtp.Close()
	if h.idp, err = startIdP(); err != nil {
		return err
	}
	defer func() { _ = h.idp.Shutdown() }()

	full := scalefill.Default.Scaled(o.Scale)
	small := scalefill.Default.Scaled(float64(o.Small) / float64(scalefill.Default.Sessions))
	dialects := []string{models.DialectSQLite}
	if o.NoSQLite {
		dialects = nil
	}
	if o.Postgres {
		srv, stop, err := pgtest.Start()
		if err != nil {
			return err
		}
		defer stop()
		if err := configurePG(srv, o.PGSharedBuffers, o.PGHugePages, o.PGSet); err != nil {
			if o.PGSharedBuffers != "" || o.PGHugePages || len(o.PGSet) > 0 {
				return err
			}
			logf("PostgreSQL keeps its settings: %v", err)
		}
		h.pgAdmin = srv.AdminURL
		dialects = append(dialects, models.DialectPostgres)
	}
	fmt.Printf("# bench:scale — %s, %d CPUs; full size ×%g: %d users, %d sessions (half expired), %d links; load %d clients (sign-ins %d) × %v × %d rounds, the sizes taking turns\n\n",
		machine(), numCPU(), o.Scale, full.Users, full.Sessions, full.Tokens, o.Conns, o.SignInConns, o.Duration, o.Rounds)
	if !o.NoSQLite {
		if o.PinSQLite {
			fmt.Printf("SQLite's files are kept in the OS's page cache for the run (BENCH_SQLITE_PIN=1: mapped and locked after the fill).\n\n")
		} else {
			fmt.Printf("SQLite's files are left to the OS's page cache (on a machine that evicts pages untouched for a while, as these sandboxes' DAMON reclaim does, BENCH_SQLITE_PIN=1 keeps them; each round's share in the cache is logged).\n\n")
		}
	}
	if o.Postgres {
		sb := o.PGSharedBuffers
		if sb == "" {
			sb = "its default (128MB)"
		}
		if o.PGSharedBuffers != "" {
			sb += "; before the loads the database's tables and indexes are loaded into them (pg_prewarm), the lookups' (" + strings.Join(lookupRelations, ", ") + ") last, as a server that has been up holds what its requests read"
		}
		if o.PGHugePages {
			sb += "; in huge pages (huge_pages = on)"
		}
		if len(o.PGSet) > 0 {
			sb += "; also set: " + strings.Join(o.PGSet, ", ")
		}
		fmt.Printf("PostgreSQL's shared_buffers: %s\n\n", sb)
	}
	for _, d := range dialects {
		rows, err := h.measure(d, [2]scalefill.Sizes{small, full})
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		report(d, rows)
		reportRounds(d, rows)
		reportStatements(rows)
	}
	return nil
}

// result is one dialect at one size.
type result struct {
	Sizes                         scalefill.Sizes
	Fill                          time.Duration
	Bytes                         int64
	Prewarmed                     int64 // bytes of relations loaded into PostgreSQL's buffers (prewarm)
	Ready                         time.Duration
	Bare, Session, Authz          stat
	BareAfter                     stat
	PurgeTook                     time.Duration
	Purged                        int64
	PurgeCut                      bool // stopped by PurgeFor before the end
	DuringPurge                   stat
	InsertsPurge                  inserts // a sign-in's session inserts during the purge
	InsertsIdle                   inserts // the same inserts under the same load, no purge
	UsersFirst, UsersHundredth    time.Duration
	SessionsFirst, SessionsHundth time.Duration
	Delete                        time.Duration
	DeleteSessions                int
	// The sign-in round trips (signin_*.go).
	EmailSignIn, PasswordSignIn, OAuthSignIn stat
	// latchkey's memory after the first round's session loads, and after
	// the sign-ins (whose Argon2id takes 19 MiB a password) and the purge.
	Mem, MemSignedIn memory
	// Rounds are the loads of each round; the stats above are their
	// merge (rounds.go).
	Rounds []round
}

// measure fills both sizes of one dialect, starts latchkey on each, runs
// the loads in o.Rounds interleaved rounds (the order of the sizes
// alternating, so that a drift of the shared machine falls on both), then
// the purge and the operations on each.
func (h *harness) measure(dialect string, sizes [2]scalefill.Sizes) ([2]*result, error) {
	var ins [2]*instance
	defer func() {
		for _, in := range ins {
			in.close()
		}
	}()
	for i, sz := range sizes {
		in, err := h.start(dialect, sz, i)
		if err != nil {
			return [2]*result{}, fmt.Errorf("%d sessions: %w", sz.Sessions, err)
		}
		ins[i] = in
	}
	for i := range h.o.Rounds {
		order := ins
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, in := range order {
			logf("%s %d: round %d of %d", dialect, in.r.Sizes.Sessions, i+1, h.o.Rounds)
			if err := h.loads(in); err != nil {
				return [2]*result{}, fmt.Errorf("%d sessions: %w", in.r.Sizes.Sessions, err)
			}
			logf("%s %d: round %d: %s", dialect, in.r.Sizes.Sessions, i+1, in.state())
		}
	}
	var rows [2]*result
	for i, in := range ins {
		in.r.mergeRounds()
		if err := h.purgeAndOperations(in); err != nil {
			return [2]*result{}, fmt.Errorf("%d sessions: %w", in.r.Sizes.Sessions, err)
		}
		rows[i] = in.r
		logf("%s %d: %+v", dialect, in.r.Sizes.Sessions, *in.r) // kept should a later step fail
	}
	return rows, nil
}

// loads is one round of the measured loads on one size: the bare
// handler, GET /session and forward-auth, the bare handler again, and the
// three sign-ins. latchkey's memory is read after the first round's
// session loads.
func (h *harness) loads(in *instance) error {
	o := h.o
	var rd round
	rd.Bare = load(o, h.bare.origin+"/", nil)
	meter := in.meter
	if o.PerfDir != "" && len(in.r.Rounds) == o.Rounds-1 {
		meter = meter.profiling(o.PerfDir, fmt.Sprintf("%s-%d", in.s.Dialect(), in.r.Sizes.Sessions))
	}
	rd.Session = meter.measure("session", func() stat { return load(o, in.sessionURL, in.cookie) })
	rd.Authz = meter.measure("forward-auth", func() stat { return load(o, in.authzURL, in.cookie) })
	rd.BareAfter = load(o, h.bare.origin+"/", nil)
	if len(in.r.Rounds) == 0 {
		in.r.Mem = readMemory(in.lk.cmd.Process.Pid, in.metricsURL, in.s)
	}
	base := in.lk.origin + "/api/auth"
	sz := in.r.Sizes
	for _, f := range []struct {
		name string
		to   *stat
		flow signInFlow
	}{
		{"email", &rd.EmailSignIn, emailSignIn(h.box, sz.Users, o.SignInConns)},
		{"password", &rd.PasswordSignIn, passwordSignIn(sz.Users)},
		{"oauth", &rd.OAuthSignIn, oauthSignIn(h.idp, sz.Users)},
	} {
		var err error
		if *f.to, err = signIns(o, base, meter, f.name, f.flow); err != nil {
			return fmt.Errorf("%s sign-in: %w", f.name, err)
		}
	}
	in.r.Rounds = append(in.r.Rounds, rd)
	return nil
}

// purgeAndOperations measures the purge of the expired half under GET
// /session load, the admin listings' pages and users delete on one size.
func (h *harness) purgeAndOperations(in *instance) error {
	ctx := context.Background()
	o, r, s, n, now, sz := h.o, in.r, in.s, in.n, in.now, in.r.Sizes
	// The purge of the expired half, under GET /session load, while a
	// "sign-in" in its own process (insertprobe.go) inserts a session every
	// 10 ms and times each insert; first the same inserts under the same
	// load without a purge, the longest wait that is none of the purge's
	// doing (the scheduler of 2 busy cores, the commit).
	logf("%s %d: inserts under load", s.Dialect(), sz.Sessions)
	idleDone := make(chan struct{})
	probe, err := startInsertProbe(in.c, sz, now, fmt.Sprintf("idle-%d", n))
	if err != nil {
		return err
	}
	go func() { time.Sleep(o.Duration); close(idleDone) }()
	loadUntil(o, in.sessionURL, in.cookie, idleDone)
	if r.InsertsIdle, err = probe.stop(); err != nil {
		return err
	}
	logf("%s %d: purge under load", s.Dialect(), sz.Sessions)
	if probe, err = startInsertProbe(in.c, sz, now, fmt.Sprintf("purge-%d", n)); err != nil {
		return err
	}
	purgeDone := make(chan struct{})
	var purgeErr error
	go func() {
		defer close(purgeDone)
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if o.PurgeFor > 0 {
			pctx, cancel = context.WithTimeout(ctx, o.PurgeFor)
		}
		defer cancel()
		t0 := time.Now()
		r.Purged, purgeErr = s.PurgeExpired(pctx, now)
		r.PurgeTook = time.Since(t0)
		if purgeErr != nil && pctx.Err() != nil && ctx.Err() == nil {
			r.PurgeCut, purgeErr = true, nil
		}
	}()
	r.DuringPurge = loadUntil(o, in.sessionURL, in.cookie, purgeDone)
	r.DuringPurge.lat = nil
	if r.InsertsPurge, err = probe.stop(); err != nil {
		return err
	}
	if purgeErr != nil {
		return purgeErr
	}
	r.MemSignedIn = readMemory(in.lk.cmd.Process.Pid, in.metricsURL, s)

	ad := adminstore.New(s)
	if r.UsersFirst, r.UsersHundredth, err = pages(func(p adminstore.Page) (string, error) {
		_, next, err := ad.UserOverviews(ctx, time.Now(), p)
		return next, err
	}); err != nil {
		return err
	}
	if r.SessionsFirst, r.SessionsHundth, err = pages(func(p adminstore.Page) (string, error) {
		_, next, err := ad.SessionListings(ctx, "", time.Now(), p)
		return next, err
	}); err != nil {
		return err
	}
	// users delete of a user with many sessions.
	r.DeleteSessions = min(10_000, max(100, sz.Sessions/100))
	u := &models.User{}
	if err := s.CreateUser(ctx, u); err != nil {
		return err
	}
	for i := 0; i < r.DeleteSessions; i += 500 {
		var vals []string
		var args []any
		for j := i; j < min(r.DeleteSessions, i+500); j++ {
			vals = append(vals, "(?, ?, ?, ?, ?)")
			args = append(args, fmt.Sprintf("del-%d-%d", n, j), fmt.Sprintf("del-hash-%d-%d", n, j), u.ID, now.Add(time.Hour), now)
		}
		if err := s.DB().Exec("INSERT INTO sessions (id, token_hash, user_id, expires, created_at) VALUES "+strings.Join(vals, ","), args...).Error; err != nil {
			return err
		}
	}
	t0 := time.Now()
	if _, err := s.DeleteUser(ctx, u.ID, time.Now()); err != nil {
		return err
	}
	r.Delete = time.Since(t0)
	return nil
}

// pages times a listing's first page and its hundredth (of 100 rows).
func pages(page func(adminstore.Page) (string, error)) (first, hundredth time.Duration, err error) {
	p := adminstore.Page{Limit: 100}
	for i := 1; i <= 100; i++ {
		t0 := time.Now()
		next, err := page(p)
		took := time.Since(t0)
		if err != nil {
			return 0, 0, err
		}
		switch i {
		case 1:
			first = took
		case 100:
			hundredth = took
		}
		if next == "" {
			break
		}
		p.After = next
	}
	return first, hundredth, nil
}

func check(url, cookie, want string) error {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Cookie", cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(body), want) {
		return fmt.Errorf("GET %s: %s, want %s", url, body, want)
	}
	return nil
}

// proc is a started process answering HTTP at origin.
type proc struct {
	origin string
	cmd    *exec.Cmd
	done   chan struct{}
	logs   strings.Builder
	mu     sync.Mutex
}

func (p *proc) Write(b []byte) (int, error) { p.mu.Lock(); defer p.mu.Unlock(); return p.logs.Write(b) }

// startProc starts bin on a free port (-addr 127.0.0.1:PORT when addrFlag
// is "-addr", else PORT in the environment) and waits for it to be ready.
func startProc(name, bin string, env []string, dir string, args ...string) (*proc, error) {
	port, err := testport.Free()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if len(args) == 1 && args[0] == "-addr" {
		args = []string{"-addr", addr}
	} else {
		env = append(env, "PORT="+strconv.Itoa(port), "SERVICE_URL=http://"+addr+"/api/auth")
	}
	p := &proc{origin: "http://" + addr, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env, p.cmd.Dir, p.cmd.Stdout, p.cmd.Stderr = env, dir, p, p
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	ready := "/"
	if name != "bare" {
		ready = "/health/ready"
	}
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited: %s", name, p.logs.String())
		default:
		}
		if res, err := http.Get(p.origin + ready); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.stop()
	return nil, fmt.Errorf("%s not ready: %s", name, p.logs.String())
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
