package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/scalefill"
	"github.com/latchkey-auth/latchkey/test/bench/procfs"
	"github.com/latchkey-auth/latchkey/test/testport"
)

// instance is one size of one dialect: its database, filled, and latchkey
// running on it. Both sizes run at once, so that their loads can take
// turns.
type instance struct {
	n     int // 0: the small size, 1: the full size
	r     *result
	c     models.Config
	s     *models.Store
	lk    *proc
	meter cpuMeter
	unpin func() // BENCH_SQLITE_PIN: lets the OS evict the file again
	// now is the fill's clock, two days ahead: its expired half ends
	// before it.
	now                              time.Time
	sessionURL, authzURL, metricsURL string
	cookie                           func() string // a random live session's
}

// start fills a fresh database of dialect to sz (PostgreSQL: prewarmed
// when its buffers are sized), starts latchkey on it, checks that one
// filled session is signed in and warms it up with half a load.
func (h *harness) start(dialect string, sz scalefill.Sizes, n int) (*instance, error) {
	ctx := context.Background()
	in := &instance{n: n, r: &result{Sizes: sz}}
	r := in.r
	home := filepath.Join(h.dir, fmt.Sprintf("%s-%d", dialect, n))
	if err := os.MkdirAll(filepath.Join(home, "data"), 0o700); err != nil {
		return nil, err
	}
	in.c = models.Config{Dialect: dialect, DSN: filepath.Join(home, "data", "latchkey.db")}
	dbURL := ""
	if dialect == models.DialectPostgres {
		var err error
		if dbURL, err = createDB(h.pgAdmin, fmt.Sprintf("scale_%d_%d", os.Getpid(), n)); err != nil {
			return nil, err
		}
		in.c.DSN = dbURL
	}
	s, err := models.Connect(in.c)
	if err != nil {
		return nil, err
	}
	in.s = s
	logf("%s: filling %d users, %d sessions", dialect, sz.Users, sz.Sessions)
	start := time.Now()
	// The fill's "expired" half expires two days from now (its rows end
	// before the fill's clock, two days ahead): latchkey's own purge at
	// start-up leaves it, and the measured purge, run at the fill's clock,
	// deletes it.
	in.now = time.Now().Add(48 * time.Hour)
	if err := scalefill.Fill(ctx, s, sz, in.now, func(t string, done int) {
		if done%1_000_000 == 0 {
			logf("  %s %d", t, done)
		}
	}); err != nil {
		in.close()
		return nil, err
	}
	r.Fill = time.Since(start)
	if r.Bytes, err = dbBytes(s, in.c.DSN); err != nil {
		in.close()
		return nil, err
	}
	if dialect == models.DialectPostgres && h.o.PGSharedBuffers != "" {
		t0 := time.Now()
		if r.Prewarmed, err = prewarm(s); err != nil {
			in.close()
			return nil, err
		}
		logf("%s %d: prewarmed %d MiB in %v", dialect, sz.Sessions, r.Prewarmed>>20, time.Since(t0))
	}
	if dialect == models.DialectSQLite && h.o.PinSQLite {
		t0 := time.Now()
		if in.unpin, err = pinFile(in.c.DSN); err != nil {
			in.close()
			return nil, err
		}
		logf("%s %d: pinned the file in the page cache in %v", dialect, sz.Sessions, time.Since(t0))
	}
	if err := in.startLatchkey(h, home, dbURL); err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

// startLatchkey starts the binary on the filled database and times its
// start-up to ready.
func (in *instance) startLatchkey(h *harness, home, dbURL string) error {
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(h.config(filepath.Join(home, "data"))), 0o600); err != nil {
		return err
	}
	metricsPort, err := testport.Free()
	if err != nil {
		return err
	}
	metricsAddr := "127.0.0.1:" + strconv.Itoa(metricsPort)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "AUTH_SECRET=latchkey-scale-bench-secret-0123456789abcdef",
		"DATABASE_URL=" + dbURL, "LOG_LEVEL=warn", "METRICS_ADDR=" + metricsAddr}
	in.metricsURL = "http://" + metricsAddr + "/metrics"
	start := time.Now()
	if in.lk, err = startProc("latchkey", h.bin, env, home, "--config", filepath.Join(home, "config.yaml")); err != nil {
		return err
	}
	in.r.Ready = time.Since(start)
	postmaster := 0
	var statements *statementMeter
	var server *sql.DB
	if in.s.Dialect() == models.DialectPostgres {
		if postmaster, err = postmasterPID(in.s); err != nil {
			return err
		}
		statements = newStatementMeter(in.s)
		if server, err = in.s.DB().DB(); err != nil {
			return err
		}
	}
	in.meter = newCPUMeter(in.lk.cmd.Process.Pid, postmaster, statements, server)
	live := in.r.Sizes.Sessions / 2
	in.cookie = func() string {
		return "next-auth.session-token=" + scalefill.SessionToken(2*rand.IntN(live))
	}
	in.sessionURL, in.authzURL = in.lk.origin+"/api/auth/session", in.lk.origin+"/authz/auth-request"
	// One answer checked: signed in, as the session's user.
	if err := check(in.sessionURL, "next-auth.session-token="+scalefill.SessionToken(0), `"email":"`+scalefill.Email(0)+`"`); err != nil {
		return err
	}
	warm := h.o
	warm.Duration = h.o.Duration / 2
	load(warm, in.sessionURL, in.cookie)
	return nil
}

// close stops latchkey and closes the store; nil does nothing.
func (in *instance) close() {
	if in == nil {
		return
	}
	if in.lk != nil {
		in.lk.stop()
	}
	_ = in.s.Close()
	if in.unpin != nil {
		in.unpin()
	}
}

// state is what may change under the instance between rounds: on SQLite
// the share of the file in the OS's page cache (pin.go) and the length of
// the WAL (pages a lookup may find there), and the
// machine's page cache and available memory (a file pushed out of the
// OS's cache is read from the disk).
func (in *instance) state() string {
	out := ""
	if in.s.Dialect() == models.DialectSQLite {
		out = fmt.Sprintf("file %.0f %% in the page cache, ", 100*residentShare(in.c.DSN))
		if fi, err := os.Stat(in.c.DSN + "-wal"); err == nil {
			out += fmt.Sprintf("WAL %.0f MiB, ", float64(fi.Size())/(1<<20))
		}
	}
	m := procfs.Meminfo()
	return out + fmt.Sprintf("page cache %.1f GiB, available %.1f GiB", float64(m["Cached"])/(1<<20), float64(m["MemAvailable"])/(1<<20))
}
