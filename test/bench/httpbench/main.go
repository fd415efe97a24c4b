// Command httpbench is `go tool task bench:http`: latchkey's hot routes
// under wrk, side by side with a bare Echo handler answering {}
// (test/bench/bare), on the same machine and in interleaved rounds (bare,
// target 1, bare, target 2, ..., bare), so that each target's ratio to the
// bare runs on either side of it holds on a noisy, shared machine where
// absolute figures do not.
//
// It builds both binaries, starts latchkey in the jwt and database (SQLite;
// PostgreSQL too with BENCH_POSTGRES=1) strategies and with the OpenID
// Provider on, signs a browser in on each through the real e-mail flow
// (links go to the log without an SMTP server), gets tokens from the
// provider through the code flow, checks one answer per target, then loads
// them (the provider's token endpoint, userinfo and introspection among
// them) and prints a Markdown table: median req/s and p99, their ratios to
// the bare handler's in the same rounds, the goals (informational)
// and latchkey's resident memory after the load. With BENCH_SOAK=10m it then keeps one
// target under load that long, sampling the resident memory.
//
// It exits 1 only when the harness fails: a build, a start, a sign-in, an
// answer that is not 200 or not signed in, a problem logged under load.
// Linux only (/proc); needs wrk (test/bench/install.sh).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// options are the flags; an environment variable (BENCH_...) sets a
// flag's default.
type options struct {
	Duration, Warmup time.Duration
	Rounds           int
	Load             load
	Postgres         bool
	Soak, SoakEvery  time.Duration
	SoakTarget       string
	LatchkeyBin      string
	OIDCAlg          string
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("httpbench", flag.ContinueOnError)
	env := map[string]string{} // flag name -> environment variable
	def := func(name, variable string) { env[name] = variable }
	fs.DurationVar(&o.Duration, "duration", 8*time.Second, "wrk duration of one run")
	def("duration", "BENCH_DURATION")
	fs.DurationVar(&o.Warmup, "warmup", 2*time.Second, "unmeasured load per target before the rounds; 0: none")
	def("warmup", "BENCH_WARMUP")
	fs.IntVar(&o.Rounds, "rounds", 3, "interleaved rounds; 0 with -soak: the soak only")
	def("rounds", "BENCH_ROUNDS")
	fs.IntVar(&o.Load.Threads, "threads", 2, "wrk -t")
	def("threads", "BENCH_THREADS")
	fs.IntVar(&o.Load.Conns, "connections", 50, "wrk -c")
	def("connections", "BENCH_CONNECTIONS")
	fs.BoolVar(&o.Postgres, "postgres", false, "also the database strategy on a throwaway PostgreSQL cluster")
	def("postgres", "BENCH_POSTGRES")
	fs.DurationVar(&o.Soak, "soak", 0, "after the rounds, this long under load sampling RSS, e.g. 10m")
	def("soak", "BENCH_SOAK")
	fs.DurationVar(&o.SoakEvery, "soak-every", 30*time.Second, "RSS sample interval of the soak")
	def("soak-every", "BENCH_SOAK_EVERY")
	fs.StringVar(&o.SoakTarget, "soak-target", "database", "target of the soak: jwt, database, database-query, database-pg, database-pg-query, nocookie, csrf, oidc-token, oidc-userinfo, oidc-introspect (oidc-pg-…)")
	def("soak-target", "BENCH_SOAK_TARGET")
	fs.StringVar(&o.LatchkeyBin, "latchkey", "", "latchkey binary to measure instead of building this checkout")
	def("latchkey", "BENCH_LATCHKEY_BIN")
	fs.StringVar(&o.OIDCAlg, "oidc-alg", "RS256", "the OpenID Provider's oidc.signing_algorithm: RS256 or ES256")
	def("oidc-alg", "BENCH_OIDC_ALG")
	for name, variable := range env {
		if v := os.Getenv(variable); v != "" {
			if err := fs.Set(name, v); err != nil {
				return o, fmt.Errorf("%s=%q: %w", variable, v, err)
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) { f.Usage += " (" + env[f.Name] + ")" })
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.Duration < time.Second || o.Load.Threads < 1 || o.Load.Conns < o.Load.Threads || o.Rounds < 0 || o.SoakEvery <= 0 {
		return o, errors.New("need duration >= 1s, threads >= 1, connections >= threads, rounds >= 0, soak-every > 0")
	}
	if o.OIDCAlg != "RS256" && o.OIDCAlg != "ES256" {
		return o, errors.New("oidc-alg must be RS256 or ES256")
	}
	if o.Rounds == 0 && o.Soak == 0 {
		return o, errors.New("nothing to do: rounds 0 and no soak")
	}
	return o, nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		if ctx.Err() != nil {
			err = errors.New("interrupted")
		}
		fmt.Fprintln(os.Stderr, "httpbench: FAILED:", err)
		stop()
		os.Exit(1) // after run's deferred clean-up
	}
}

func run(ctx context.Context, o options) error {
	if _, err := exec.LookPath("wrk"); err != nil {
		return errors.New("wrk not found: run test/bench/install.sh (Debian's wrk) or `go tool task bench:http`")
	}
	if _, err := os.Stat("go.mod"); err != nil {
		return errors.New("run from the repository root (go tool task bench:http)")
	}
	dir, err := os.MkdirTemp("", "latchkey-httpbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	logf("building latchkey and the bare handler (plain, and with latchkey linked in)")
	latchkeyBin, bareBin, bareLinkedBin, err := build(dir, o.LatchkeyBin)
	if err != nil {
		return err
	}
	var procs []*proc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	start := func(p *proc, err error) (*proc, error) {
		if p != nil {
			procs = append(procs, p)
		}
		return p, err
	}
	bare, err := start(startBare(bareBin))
	if err != nil {
		return err
	}
	beside, err := start(startBareBeside(bareLinkedBin, dir))
	if err != nil {
		return err
	}
	jwt, err := start(startLatchkey(latchkeyBin, dir, "jwt", "jwt", ""))
	if err != nil {
		return err
	}
	db, err := start(startLatchkey(latchkeyBin, dir, "database", "database", ""))
	if err != nil {
		return err
	}
	// The same with the lookup cache off: a query on every call.
	dbQuery, err := start(startLatchkey(latchkeyBin, dir, "database-query", "database", "", "cache_ttl: 0s"))
	if err != nil {
		return err
	}
	// The OpenID Provider's endpoints, on an instance of their own.
	openID, err := start(startOpenID(latchkeyBin, dir, "openid", "", o.OIDCAlg))
	if err != nil {
		return err
	}
	var pg, pgQuery, openIDPG *proc
	if o.Postgres {
		logf("starting a throwaway PostgreSQL cluster")
		dbURL, stopPG, err := startPostgres()
		if err != nil {
			return err
		}
		defer stopPG() // after the instance on it has stopped (defers run last first)
		defer func() {
			for _, p := range []*proc{pg, pgQuery, openIDPG} {
				if p != nil {
					p.stop()
				}
			}
		}()
		if pg, err = startLatchkey(latchkeyBin, dir, "database-pg", "database", dbURL); err != nil {
			return err
		}
		if pgQuery, err = startLatchkey(latchkeyBin, dir, "database-pg-query", "database", dbURL, "cache_ttl: 0s"); err != nil {
			return err
		}
		if openIDPG, err = startOpenID(latchkeyBin, dir, "openid-pg", dbURL, o.OIDCAlg); err != nil {
			return err
		}
	}

	logf("signing in through the e-mail flow")
	targets, err := buildTargets(bare, beside, jwt, db, dbQuery, pg, pgQuery)
	if err != nil {
		return err
	}
	logf("getting tokens from the OpenID Provider (code flow, a browser signed in)")
	for _, op := range []struct {
		p          *proc
		key, label string
	}{{openID, "oidc", "SQLite"}, {openIDPG, "oidc-pg", "PostgreSQL"}} {
		if op.p == nil {
			continue
		}
		ts, err := openIDTargets(op.p, dir, op.key, op.label, o.OIDCAlg, o.Load)
		if err != nil {
			return err
		}
		targets = append(targets, ts...)
	}
	for _, t := range targets {
		if err := t.verify(); err != nil {
			return fmt.Errorf("%w\nlog of %s (the end):\n%s", err, t.Proc.Name, tail(t.Proc.logs.String(), 20))
		}
	}
	marks := map[*proc]int{}
	for _, p := range []*proc{jwt, db, dbQuery, pg, pgQuery, openID, openIDPG} {
		if p != nil {
			marks[p] = p.logs.mark()
		}
	}

	if o.Rounds > 0 {
		res, err := measure(ctx, o, targets)
		if err != nil {
			return err
		}
		printReport(os.Stdout, o, targets, res)
		if err := afterLoad(targets, marks); err != nil {
			return fmt.Errorf("%w\n(so the figures above are suspect)", err)
		}
	}
	if o.Soak > 0 {
		if err := soak(ctx, o, targets); err != nil {
			return err
		}
		if err := afterLoad(targets, marks); err != nil {
			return fmt.Errorf("%w\n(so the soak's figures are suspect)", err)
		}
	}
	return nil
}

// buildTargets signs in where a target needs it and lists the targets,
// the bare handler first. beside is the bare handler holding a latchkey
// App; pg and pgQuery are nil without PostgreSQL.
func buildTargets(bare, beside, jwt, db, dbQuery, pg, pgQuery *proc) ([]*target, error) {
	const addr = "bench@example.com"
	jwtCookie, err := signIn(jwt, addr)
	if err != nil {
		return nil, fmt.Errorf("sign in (jwt): %w", err)
	}
	dbCookie, err := signIn(db, addr)
	if err != nil {
		return nil, fmt.Errorf("sign in (database): %w", err)
	}
	queryCookie, err := signIn(dbQuery, addr)
	if err != nil {
		return nil, fmt.Errorf("sign in (database, no cache): %w", err)
	}
	csrfCookie, token, err := csrfHolder(db)
	if err != nil {
		return nil, fmt.Errorf("csrf cookie: %w", err)
	}
	session := basePath + "/session"
	ts := []*target{
		{Key: "bare", Name: "bare Echo handler `{}`", URL: bare.Origin + "/", Proc: bare, check: emptyObject},
		{Key: "jwt", Name: "`GET /session` jwt, signed in", URL: jwt.Origin + session, Cookie: jwtCookie, Proc: jwt, Goal: 0.50, check: signedInAs(addr)},
		{Key: "database", Name: "`GET /session` database (SQLite), signed in", URL: db.Origin + session, Cookie: dbCookie, Proc: db, Goal: 0.45, check: signedInAs(addr)},
		{Key: "database-query", Name: "`GET /session` database (SQLite, `cache_ttl: 0`: a query per call), signed in", URL: dbQuery.Origin + session, Cookie: queryCookie, Proc: dbQuery, Goal: 0.45, check: signedInAs(addr)},
	}
	if pg != nil {
		pgCookie, err := signIn(pg, addr)
		if err != nil {
			return nil, fmt.Errorf("sign in (database, PostgreSQL): %w", err)
		}
		pgQueryCookie, err := signIn(pgQuery, "bench-query@example.com")
		if err != nil {
			return nil, fmt.Errorf("sign in (database, PostgreSQL, no cache): %w", err)
		}
		ts = append(ts,
			&target{Key: "database-pg", Name: "`GET /session` database (PostgreSQL), signed in", URL: pg.Origin + session, Cookie: pgCookie, Proc: pg, Goal: 0.45, check: signedInAs(addr)},
			&target{Key: "database-pg-query", Name: "`GET /session` database (PostgreSQL, `cache_ttl: 0`), signed in", URL: pgQuery.Origin + session, Cookie: pgQueryCookie, Proc: pgQuery, Goal: 0.45, check: signedInAs("bench-query@example.com")},
		)
	}
	// The forward-auth endpoint is as hot as GET /session (every proxied
	// request): the same goals.
	authz := "/authz/auth-request"
	ts = append(ts,
		&target{Key: "authz-jwt", Name: "`GET /authz/auth-request` jwt, signed in", URL: jwt.Origin + authz, Cookie: jwtCookie, Proc: jwt, Goal: 0.50, check: noBody, header: remoteEmail(addr)},
		&target{Key: "authz-db", Name: "`GET /authz/auth-request` database (SQLite), signed in", URL: db.Origin + authz, Cookie: dbCookie, Proc: db, Goal: 0.45, check: noBody, header: remoteEmail(addr)},
	)
	// The reference must send the header set the no-cookie answer sends.
	reference, err := headerShape(bare.Origin + "/headers")
	if err != nil {
		return nil, fmt.Errorf("the header reference: %w", err)
	}
	return append(ts,
		&target{Key: "headers", Name: "bare Echo handler `{}` with latchkey's cookieless `GET /session` headers", URL: bare.Origin + "/headers", Proc: bare, Floor: true, check: emptyObject},
		// The same handler in a process that carries latchkey but does none
		// of its per-request work: the rest of the floor.
		&target{Key: "headers-beside", Name: "the same, in a process holding an unserved latchkey App (all of latchkey linked, started, its heap live)", URL: beside.Origin + "/headers", Proc: beside, Floor: true, check: emptyObject},
		&target{Key: "nocookie", Name: "`GET /session` no cookie", URL: db.Origin + session, Proc: db, Goal: 0.80, check: emptyObject, header: shapeIs(reference)},
		&target{Key: "csrf", Name: "`GET /csrf` with a valid CSRF cookie", URL: db.Origin + basePath + "/csrf", Cookie: csrfCookie, Proc: db, Goal: 0.75, check: csrfToken(token)},
	), nil
}

// afterLoad checks that every target still answers as before the load and
// that latchkey logged no problem meanwhile: a database strategy that fails
// answers {} with 200, which wrk would count as success.
func afterLoad(targets []*target, marks map[*proc]int) error {
	for _, t := range targets {
		if err := t.verify(); err != nil {
			return fmt.Errorf("after the load: %w", err)
		}
	}
	for p, mark := range marks {
		if lines := p.logs.problemsSince(mark); len(lines) > 0 {
			return fmt.Errorf("%s logged %d problems under load, e.g.:\n%s", p.Name, len(lines), lines[0])
		}
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "httpbench: "+format+"\n", args...)
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
