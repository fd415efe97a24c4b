package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of createDB

	"github.com/latchkey-auth/latchkey/models"
)

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func numCPU() int { return runtime.NumCPU() }

// machine is the CPU's model name.
func machine() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// createDB creates database name on the server of adminURL and returns its URL.
func createDB(adminURL, name string) (string, error) {
	admin, err := sql.Open("pgx", adminURL)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// dbBytes is the database's size on disk, indexes included: the SQLite
// file and its WAL after a checkpoint, or pg_database_size.
func dbBytes(s *models.Store, path string) (int64, error) {
	if s.Dialect() == models.DialectPostgres {
		var n int64
		err := s.DB().Raw("SELECT pg_database_size(current_database())").Scan(&n).Error
		return n, err
	}
	// Read to the end: an Exec of a PRAGMA that returns a row leaves its
	// prepared statement busy on the connection.
	var ck []struct{ Busy, Log, Checkpointed int }
	if err := s.DB().Raw("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&ck).Error; err != nil {
		return 0, err
	}
	var total int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			total += fi.Size()
		}
	}
	return total, nil
}

func ms(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f ms", float64(d)/1e6)
}

// report prints one dialect's table: the small size and the full size side by side.
func report(dialect string, r [2]*result) {
	fmt.Printf("## %s\n\n| | %d sessions | %d sessions | full ÷ small |\n|---|---|---|---|\n", dialect, r[0].Sizes.Sessions, r[1].Sizes.Sessions)
	// row prints a measurement at both sizes; cmp, when not nil, is
	// given both and says how the full size compares.
	row := func(name string, f func(*result) string, cmp func(small, full *result) string) {
		c := ""
		if cmp != nil {
			c = cmp(r[0], r[1])
		}
		fmt.Printf("| %s | %s | %s | %s |\n", name, f(r[0]), f(r[1]), c)
	}
	// ratio compares one figure of the two sizes.
	ratio := func(f func(*result) float64) func(small, full *result) string {
		return func(small, full *result) string { return div(f(full), f(small)) }
	}
	bare := func(x *result) float64 { return (x.Bare.RPS + x.BareAfter.RPS) / 2 }
	row("users / sessions / links", func(x *result) string {
		return fmt.Sprintf("%d / %d / %d", x.Sizes.Users, x.Sizes.Sessions, x.Sizes.Tokens)
	}, nil)
	row("fill", func(x *result) string { return x.Fill.Round(time.Millisecond).String() }, nil)
	row("bytes on disk per user / per session", func(x *result) string {
		return fmt.Sprintf("%d / %d", x.Bytes/int64(x.Sizes.Users), x.Bytes/int64(max(1, x.Sizes.Sessions)))
	}, nil)
	if r[1].Prewarmed > 0 {
		row("tables and indexes prewarmed into shared_buffers", func(x *result) string { return fmt.Sprintf("%.1f MiB", float64(x.Prewarmed)/(1<<20)) }, nil)
	}
	row("start-up to /health/ready", func(x *result) string { return ms(x.Ready) }, nil)
	row("bare handler req/s (p99)", func(x *result) string { return fmt.Sprintf("%.0f (%s)", bare(x), ms(x.Bare.P99)) }, ratio(bare))
	cpu := cpuRow(dialect, row)
	for _, t := range []struct {
		name string
		get  func(*result) stat
	}{{"`GET /session` random live session", func(x *result) stat { return x.Session }},
		{"forward-auth random live session", func(x *result) stat { return x.Authz }}} {
		row(t.name+": req/s, share of bare, p99", func(x *result) string {
			s := t.get(x)
			return fmt.Sprintf("%.0f, %.2f, %s%s", s.RPS, s.RPS/bare(x), ms(s.P99), errNote(s))
		}, ratio(func(x *result) float64 { return t.get(x).RPS / bare(x) }))
		row(t.name+": p99", func(x *result) string { return ms(t.get(x).P99) }, ratio(func(x *result) float64 { return float64(t.get(x).P99) }))
		cpu(t.name, t.get)
	}
	for _, t := range []struct {
		name string
		get  func(*result) stat
	}{{"e-mail sign-in round trip (csrf, POST /signin/email, SMTP, link)", func(x *result) stat { return x.EmailSignIn }},
		{"password sign-in (csrf, POST /callback/credentials)", func(x *result) stat { return x.PasswordSignIn }},
		{"OAuth sign-in of a linked account (csrf, POST /signin/github, IdP, callback)", func(x *result) stat { return x.OAuthSignIn }}} {
		row(t.name+": ops/s, p50, p99", func(x *result) string {
			s := t.get(x)
			return fmt.Sprintf("%.1f, %s, %s%s", s.RPS, ms(s.P50), ms(s.P99), errNote(s))
		}, func(small, full *result) string {
			a, b := t.get(small), t.get(full)
			return fmt.Sprintf("ops %s, p99 %s", div(b.RPS, a.RPS), div(float64(b.P99), float64(a.P99)))
		})
		cpu(t.name, t.get)
	}
	row("purge: rows deleted, duration (rows/s)", func(x *result) string {
		cut := ""
		if x.PurgeCut {
			cut = ", stopped by BENCH_PURGE_FOR"
		}
		return fmt.Sprintf("%d, %s (%.0f/s%s)", x.Purged, x.PurgeTook.Round(time.Millisecond), float64(x.Purged)/x.PurgeTook.Seconds(), cut)
	}, nil)
	row("`GET /session` during the purge: req/s, p99 (× before)", func(x *result) string {
		return fmt.Sprintf("%.0f, %s (%.2f×)%s", x.DuringPurge.RPS, ms(x.DuringPurge.P99), float64(x.DuringPurge.P99)/float64(x.Session.P99), errNote(x.DuringPurge))
	}, nil)
	row("a sign-in's session insert during the purge: longest, p99, over 100 ms", func(x *result) string {
		return x.InsertsPurge.String()
	}, nil)
	row("… the same inserts under the same load, no purge", func(x *result) string {
		return x.InsertsIdle.String()
	}, nil)
	row("`users list` page 1 / page 100", func(x *result) string { return ms(x.UsersFirst) + " / " + ms(x.UsersHundredth) }, nil)
	row("`sessions list` page 1 / page 100", func(x *result) string { return ms(x.SessionsFirst) + " / " + ms(x.SessionsHundth) }, nil)
	row("`users delete` of a user with N sessions", func(x *result) string { return fmt.Sprintf("%s (N=%d)", ms(x.Delete), x.DeleteSessions) }, nil)
	for _, t := range []struct {
		name string
		get  func(*result) memory
	}{{"after the session loads", func(x *result) memory { return x.Mem }},
		{"after the sign-ins and the purge", func(x *result) memory { return x.MemSignedIn }}} {
		row("latchkey RSS "+t.name+": VmRSS (RssAnon + RssFile)", func(x *result) string {
			m := t.get(x)
			return fmt.Sprintf("%s (%s + %s)", mib(m.RSS), mib(m.Anon), mib(m.File))
		}, func(small, full *result) string {
			return "anon " + div(float64(t.get(full).Anon), float64(t.get(small).Anon))
		})
		row("… of which Go's heap in use / goroutine stacks; goroutines"+conns(dialect), func(x *result) string {
			m := t.get(x)
			v := fmt.Sprintf("%s / %s; %d", mib(m.HeapInuse), mib(m.Stacks), m.Goroutines)
			if dialect == models.DialectPostgres {
				v += fmt.Sprintf("; %d", m.Connections)
			}
			return v
		}, func(small, full *result) string {
			return "heap " + div(float64(t.get(full).HeapInuse), float64(t.get(small).HeapInuse))
		})
	}
	fmt.Println()
}

// conns names the connections column on PostgreSQL.
func conns(dialect string) string {
	if dialect == models.DialectPostgres {
		return "; connections to PostgreSQL"
	}
	return ""
}

// cpuRow returns the printer of a load's CPU per request: latchkey's and
// PostgreSQL's, or on SQLite latchkey's alone (the database runs inside it).
func cpuRow(dialect string, row func(string, func(*result) string, func(small, full *result) string)) func(string, func(*result) stat) {
	us := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/1e3) }
	return func(name string, get func(*result) stat) {
		per := func(x *result) cpuUse { s := get(x); return s.CPU.perReq(s.N) }
		if dialect != models.DialectPostgres {
			row(name+": latchkey CPU µs per request (SQLite inside)", func(x *result) string { return us(per(x).Latchkey) },
				func(small, full *result) string {
					return div(float64(per(full).Latchkey), float64(per(small).Latchkey))
				})
			return
		}
		row(name+": CPU µs per request, latchkey / PostgreSQL", func(x *result) string {
			return us(per(x).Latchkey) + " / " + us(per(x).DB)
		}, func(small, full *result) string {
			return div(float64(per(full).Latchkey), float64(per(small).Latchkey)) + " / " + div(float64(per(full).DB), float64(per(small).DB))
		})
		row(name+": PostgreSQL's system CPU µs and minor page faults per request; new backends per 1 000 requests", func(x *result) string {
			s := get(x)
			n := float64(max(1, s.N))
			return fmt.Sprintf("%s; %.1f; %.1f", us(per(x).DBSys), float64(s.CPU.DBFaults)/n, 1000*float64(s.CPU.DBBackends)/n)
		}, nil)
	}
}

// div is a ÷ b to two places, "–" when b is 0.
func div(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

func errNote(s stat) string {
	if s.Errors == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d errors, e.g. %s)", s.Errors, s.FirstBad)
}
