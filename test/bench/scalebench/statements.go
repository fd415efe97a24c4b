package main

import (
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// statementMeter reads pg_stat_statements in one database: reset before
// a load, read after it. nil (SQLite, or a server without the library)
// reads nothing.
type statementMeter struct{ db *sql.DB }

// newStatementMeter creates the extension in s's database; nil when the
// server has not loaded its library.
func newStatementMeter(s *models.Store) *statementMeter {
	db, err := s.DB().DB()
	if err != nil {
		return nil
	}
	if _, err := db.Exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		logf("no per-statement figures: %v", err)
		return nil
	}
	if _, err := db.Exec("SELECT pg_stat_statements_reset()"); err != nil {
		logf("no per-statement figures: %v", err)
		return nil
	}
	return &statementMeter{db: db}
}

func (m *statementMeter) reset() {
	if m != nil {
		_, _ = m.db.Exec("SELECT pg_stat_statements_reset()")
	}
}

// statement is one normalised statement's figures during a load.
type statement struct {
	Query              string // shortened for a table cell
	Key                string // sameStatement of the whole text
	Calls              int64
	Exec, ReadTime     time.Duration // executor time; time reading blocks from the OS
	Hit, Read, Dirtied int64         // shared buffers
	WALBytes           int64
}

// plus adds another load's figures of the same statement.
func (st statement) plus(o statement) statement {
	st.Query, st.Key = o.Query, o.Key
	st.Calls += o.Calls
	st.Exec += o.Exec
	st.ReadTime += o.ReadTime
	st.Hit += o.Hit
	st.Read += o.Read
	st.Dirtied += o.Dirtied
	st.WALBytes += o.WALBytes
	return st
}

// top reads the statements of this database since the last reset, the
// costliest first (pg_stat_statements' own and the meter's excluded).
func (m *statementMeter) top(n int) []statement {
	if m == nil {
		return nil
	}
	rows, err := m.db.Query(`SELECT query, calls, total_exec_time, blk_read_time,
		shared_blks_hit, shared_blks_read, shared_blks_dirtied, wal_bytes::bigint
		FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query NOT LIKE '%pg_stat_statements%'
		ORDER BY total_exec_time DESC LIMIT $1`, n)
	if err != nil {
		logf("pg_stat_statements: %v", err)
		return nil
	}
	defer rows.Close()
	var out []statement
	for rows.Next() {
		var st statement
		var exec, read float64
		if err := rows.Scan(&st.Query, &st.Calls, &exec, &read, &st.Hit, &st.Read, &st.Dirtied, &st.WALBytes); err != nil {
			logf("pg_stat_statements: %v", err)
			return nil
		}
		st.Exec, st.ReadTime = time.Duration(exec*1e6), time.Duration(read*1e6)
		st.Query, st.Key = shortQuery(st.Query), sameStatement(st.Query)
		out = append(out, st)
	}
	return out
}

var (
	spaces    = regexp.MustCompile(`\s+`)
	constants = regexp.MustCompile(`\$\d+|\b\d+\b`)
)

// sameStatement is the key that matches a statement across the two
// sizes' databases: pg_stat_statements keeps the text it saw first, with
// constants as written or as $n.
func sameStatement(q string) string { return strings.ToLower(constants.ReplaceAllString(q, "?")) }

// shortQuery is a statement's text on one line, cut to fit a table cell.
func shortQuery(q string) string {
	q = strings.ReplaceAll(spaces.ReplaceAllString(strings.TrimSpace(q), " "), "|", "\\|")
	if len(q) > 110 {
		q = q[:110] + "…"
	}
	return q
}

// reportStatements prints, for each PostgreSQL load, its costliest
// statements at both sizes side by side, per operation of the load (a
// request or a sign-in round trip): how often each ran, its executor
// time, the shared buffers it touched and the WAL it wrote, so growth in
// PostgreSQL's CPU can be put on a statement and a cause (pages read from
// the OS, pages dirtied, full-page images in the WAL). Statements run
// less than once in twenty operations (the instance's background polls)
// are left out.
func reportStatements(r [2]*result) {
	if len(r[1].Session.Statements) == 0 {
		return
	}
	fmt.Printf("### PostgreSQL per statement (pg_stat_statements; per operation of the load, %d → %d sessions)\n\n", r[0].Sizes.Sessions, r[1].Sizes.Sessions)
	fmt.Printf("| load | statement | calls | executor µs | buffers hit / read from the OS / dirtied | µs reading | WAL bytes |\n|---|---|---|---|---|---|---|\n")
	for _, t := range loadsOf() {
		small, full := t.get(r[0]), t.get(r[1])
		per := func(s stat) map[string]statement {
			m := map[string]statement{}
			for _, st := range s.Statements {
				m[st.Key] = st
			}
			return m
		}
		a, b := per(small), per(full)
		var queries []string
		for _, st := range full.Statements {
			queries = append(queries, st.Key)
		}
		for _, st := range small.Statements {
			if _, ok := b[st.Key]; !ok {
				queries = append(queries, st.Key)
			}
		}
		for _, q := range queries {
			x, y := a[q], b[q]
			text := y.Query
			if text == "" {
				text = x.Query
			}
			n, m := float64(max(1, small.N)), float64(max(1, full.N))
			if float64(x.Calls)/n < 0.05 && float64(y.Calls)/m < 0.05 {
				continue
			}
			fmt.Printf("| %s | `%s` | %.2f → %.2f | %.0f → %.0f (%s) | %.1f / %.2f / %.2f → %.1f / %.2f / %.2f | %.0f → %.0f | %.0f → %.0f |\n",
				t.name, text, float64(x.Calls)/n, float64(y.Calls)/m,
				float64(x.Exec)/1e3/n, float64(y.Exec)/1e3/m, div(float64(y.Exec)/m, float64(x.Exec)/n),
				float64(x.Hit)/n, float64(x.Read)/n, float64(x.Dirtied)/n, float64(y.Hit)/m, float64(y.Read)/m, float64(y.Dirtied)/m,
				float64(x.ReadTime)/1e3/n, float64(y.ReadTime)/1e3/m, float64(x.WALBytes)/n, float64(y.WALBytes)/m)
		}
	}
	fmt.Println()
}

// loadsOf are the measured loads whose statements are reported.
func loadsOf() []struct {
	name string
	get  func(*result) stat
} {
	return []struct {
		name string
		get  func(*result) stat
	}{
		{"GET /session", func(x *result) stat { return x.Session }},
		{"forward-auth", func(x *result) stat { return x.Authz }},
		{"e-mail sign-in", func(x *result) stat { return x.EmailSignIn }},
		{"password sign-in", func(x *result) stat { return x.PasswordSignIn }},
		{"OAuth sign-in", func(x *result) stat { return x.OAuthSignIn }},
	}
}
