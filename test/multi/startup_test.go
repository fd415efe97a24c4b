package multi_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// Three instances started at the same moment on an empty database all come
// up: the migrations run under one advisory lock, so each step is applied
// exactly once, and the instances that waited for the lock find the schema
// done. `latchkey migrate status` then reports the latest version.
func TestMigrationsRacingAtStartUp(t *testing.T) {
	c := newCluster(t, pgtest.NewDatabase(t, adminURL))
	require.Empty(t, c.tables(), "the database starts empty")

	c.nodes = c.launchAll(3)
	for _, in := range c.nodes {
		in.waitReady(t)
	}

	rows, err := c.sql().QueryContext(context.Background(), "SELECT version, count(*) FROM schema_migrations GROUP BY version ORDER BY version")
	require.NoError(t, err)
	applied := map[int]int{}
	for rows.Next() {
		var v, n int
		require.NoError(t, rows.Scan(&v, &n))
		applied[v] = n
	}
	require.NoError(t, rows.Err())
	want := map[int]int{}
	for _, v := range models.Versions() {
		want[v] = 1
	}
	require.Equal(t, want, applied, "every step recorded once")
	for _, in := range c.nodes {
		require.NotContains(t, in.logs.String(), "level=ERROR", "instance %s", in.name)
	}

	st := c.run("status", c.env(0, c.dbURL), "migrate", "status")
	require.Equal(t, 0, st.exitCode(t), st.logs.String())
	require.Contains(t, st.logs.String(), fmt.Sprintf("postgres schema: version %d of %d\n", models.SchemaVersion(), models.SchemaVersion()))
	require.NotContains(t, st.logs.String(), "pending")

	// And the three serve one user base.
	br := c.browser()
	c.signInByEmail(br, c.nodes[2], "eve@example.com")
	require.Equal(t, "eve@example.com", br.email(c.nodes[0]))
}

// Bad database input at start-up: the process exits 1 with one clear
// error naming what to fix, and leaves nothing behind: no tables in the
// database, no SQLite file as a silent fallback, no password in the log.
func TestStartUpRefusesBadDatabase(t *testing.T) {
	t.Run("malformed DATABASE_URL", func(t *testing.T) {
		c := newCluster(t, pgtest.NewDatabase(t, adminURL))
		bad := "postgres://postgres:" + dbPassword + "@127.0.0.1:not-a-port/db"
		logs := c.refused(bad)
		require.Contains(t, logs, "not a valid PostgreSQL connection string (postgres://user:password@host:5432/dbname?sslmode=require")
		require.Contains(t, logs, "check-config")
	})

	// A database that does not answer is waited for (a fail-over, a host
	// still booting) for database.startup_wait, then refused as before;
	// the wait is said once, not at every attempt.
	t.Run("unreachable database", func(t *testing.T) {
		fresh := pgtest.NewDatabase(t, adminURL)
		c := newCluster(t, fresh)
		c.appendConfig("database:\n  startup_wait: 2s\n")
		u := mustURL(t, c.dbURL)
		u.Host = fmt.Sprintf("127.0.0.1:%d", freePort(t)) // closed: nothing listens there
		logs := c.refused(u.String())
		require.Contains(t, logs, "does not answer")
		require.Contains(t, logs, "connection refused")
		require.Contains(t, logs, "DATABASE_URL", "the error says what to check")
		require.Contains(t, logs, "gave up waiting for the database after 2s (database.startup_wait;")
		require.Equal(t, 1, strings.Count(logs, "database not ready at start-up"), logs)
		require.Empty(t, c.tables(), "the database of that name on the running server is untouched")
	})

	t.Run("schema from a newer latchkey", func(t *testing.T) {
		c := newCluster(t, pgtest.NewDatabase(t, adminURL))
		newer := models.SchemaVersion() + 1
		// What a newer binary leaves behind, reduced to what this one reads
		// first: its history. Anything this binary created would show up as
		// another table.
		_, err := c.sql().Exec(`CREATE TABLE schema_migrations (version bigint PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`)
		require.NoError(t, err)
		_, err = c.sql().Exec(`INSERT INTO schema_migrations VALUES ($1, 'from a newer latchkey', now())`, newer)
		require.NoError(t, err)

		logs := c.refused(c.dbURL)
		require.Contains(t, logs, fmt.Sprintf("it is at version %d, this binary knows up to %d; run the newer latchkey", newer, models.SchemaVersion()))
		require.Equal(t, []string{"schema_migrations"}, c.tables(), "nothing created")
		require.Equal(t, 1, c.count("schema_migrations"))

		st := c.run("migrate", c.env(0, c.dbURL), "migrate")
		require.Equal(t, 1, st.exitCode(t), "`latchkey migrate` refuses it too")
		require.Contains(t, st.logs.String(), "run the newer latchkey")
	})
}

// errorLine is a log line at ERROR level.
var errorLine = regexp.MustCompile(`(?m)^.*level=ERROR.*$`)

// refused starts an instance on dbURL that must not start: it exits 1
// without ever answering, with one error naming the problem (besides, for a
// configuration problem, the pointer to check-config), and with no SQLite
// file made instead. It returns the instance's log.
func (c *cluster) refused(dbURL string) string {
	c.t.Helper()
	port := freePort(c.t)
	in := c.run("refused", c.env(port, dbURL))
	require.Equal(c.t, 1, in.exitCode(c.t))
	logs := in.logs.String()
	errs := errorLine.FindAllString(logs, -1)
	require.NotEmpty(c.t, errs, logs)
	require.LessOrEqual(c.t, len(errs), 2, "one error, not a cascade: %s", logs)
	require.NotContains(c.t, logs, "latchkey listening")
	res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s/csrf", port, basePath))
	if err == nil {
		_ = res.Body.Close()
	}
	require.Error(c.t, err, "nothing listens")
	entries, err := os.ReadDir(c.dir)
	require.NoError(c.t, err)
	for _, e := range entries {
		require.False(c.t, e.IsDir() || strings.HasSuffix(e.Name(), ".db"), "left behind: %s", filepath.Join(c.dir, e.Name()))
	}
	return logs
}

// tables lists the tables of the database's public schema.
func (c *cluster) tables() []string {
	c.t.Helper()
	rows, err := c.sql().Query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name")
	require.NoError(c.t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		require.NoError(c.t, rows.Scan(&name))
		out = append(out, name)
	}
	require.NoError(c.t, rows.Err())
	return out
}
