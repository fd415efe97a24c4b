package config_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// DATABASE_URL forms and the file each names. A plain path is literal up to
// "?"; the file: and sqlite:// URL forms decode %XX, as SQLite does.
func TestDatabaseURLForms(t *testing.T) {
	cases := map[string]string{
		"":                                filepath.Join("d", "latchkey.db"),
		"/var/db/l.db":                    "/var/db/l.db",
		"rel/l.db":                        "rel/l.db",
		"/var/db/a#b%41 ü.db":             "/var/db/a#b%41 ü.db",
		"/var/db/l.db?_fk=1":              "/var/db/l.db",
		"file:/var/db/l.db?_fk=1":         "/var/db/l.db",
		"file:./dev.db":                   "./dev.db",
		"file:data/l.db":                  "data/l.db",
		"file:///var/db/l.db":             "/var/db/l.db",
		"file://localhost/var/db/l.db":    "/var/db/l.db",
		"file:/var/db/a%23b%3F%25%20ü.db": "/var/db/a#b?% ü.db",
		"sqlite:///var/db/l.db":           "/var/db/l.db",
		"sqlite://rel.db":                 "rel.db",
		"sqlite3://rel.db?cache=shared":   "rel.db",
		"sqlite:///var/db/a%23b.db":       "/var/db/a#b.db",
		"file:/var/db/l.db?_journal_mode=WAL&_foreign_keys=on&mode=rwc&cache=private": "/var/db/l.db",
	}
	for in, want := range cases {
		c := config.Defaults()
		c.DataDir, c.DatabaseURL = "d", in
		require.Equal(t, want, c.DatabasePath(), in)
		_, err := c.Validate(catalogue)
		require.NoError(t, err, in)
	}
}

// An in-memory database is one database per pooled connection: sessions
// and sign-in links written by one request are missing in the next.
// Options latchkey would not honour, and names SQLite would read otherwise
// than the operator, are refused too, never silently dropped.
func TestDatabaseURLRefused(t *testing.T) {
	cases := map[string]string{
		":memory:":                             "in-memory",
		":memory:?cache=shared":                "in-memory",
		"file::memory:":                        "in-memory",
		"file::memory:?cache=shared":           "in-memory",
		"file:%3Amemory%3A":                    "in-memory",
		"sqlite://:memory:":                    "in-memory",
		"sqlite3://:memory:":                   "in-memory",
		"file:memdb1?mode=memory&cache=shared": "in-memory",
		"/var/db/l.db?mode=memory":             "in-memory",
		"file:/var/db/l.db?mode=ro":            `option mode=ro`,
		"file:/var/db/l.db?vfs=memdb":          `option vfs=memdb`,
		"/var/db/l.db?_busy_timeout=10":        `option _busy_timeout=10`,
		"sqlite:///var/db/l.db?_fk=0":          `option _fk=0`,
		"file:/var/db/a#b.db":                  "%23",
		"sqlite:///var/db/a#b.db":              "%23",
		"file://db.example.com/var/db/l.db":    "host",
		"file:/var/db/a%zz.db":                 "escape",
		"file:":                                "no file",
		"sqlite://":                            "no file",
		"file:?_fk=1":                          "no file",
		"?_fk=1":                               "no file",
	}
	for in, want := range cases {
		c := config.Defaults()
		c.DatabaseURL = in
		_, err := c.Validate(catalogue)
		requireProblem(t, problems(t, err), "database_url", want)
		require.Empty(t, c.DatabasePath(), "%q: no path, so a config that skipped Validate cannot open some other file", in)
	}
}

// RedactedDatabaseURL masks a PostgreSQL password (app/config/pgdsn's
// tests hold every form) and shows anything else, a SQLite path, as it is.
func TestRedactedDatabaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://app:s3cret@db:5432/auth?sslmode=require": "postgres://app:***@db:5432/auth?sslmode=require",
		"host=db dbname=auth password=s3cret user=app":       "host=db dbname=auth password=*** user=app",
		"file:/var/lib/latchkey/auth.db?password=x":          "file:/var/lib/latchkey/auth.db?password=x",
	} {
		c := config.Config{DatabaseURL: in}
		require.Equal(t, want, c.RedactedDatabaseURL(), in)
	}
}

// A cluster that fails over is named by several hosts; without
// target_session_attrs=read-write pgx takes whichever answers first, a
// standby included, so check-config warns. Asking for a standby is refused:
// latchkey writes on every sign-in.
func TestPostgresTargetSessionAttrs(t *testing.T) {
	warned := map[string]bool{
		"postgres://app:pw@pg-a:5432,pg-b:5433/latchkey":                                    true,
		"postgres://app:pw@pg-a:5432,pg-b:5433/latchkey?target_session_attrs=any":           true,
		"host=pg-a,pg-b port=5432,5433 dbname=latchkey":                                     true,
		"postgres://app:pw@pg-a:5432,pg-b:5433/latchkey?target_session_attrs=read-write":    false,
		"postgres://app:pw@pg-a:5432,pg-b:5433/latchkey?target_session_attrs=primary":       false,
		"host=pg-a,pg-b port=5432,5433 dbname=latchkey target_session_attrs = 'read-write'": false,
		"postgres://app:pw@pg-a:5432/latchkey":                                              false,
		"postgres://app:pw@pg-a:5432/latchkey?sslmode=prefer":                               false, // one host, tried twice (TLS, then not)
	}
	for in, warn := range warned {
		c := config.Defaults()
		c.DatabaseURL = in
		warnings, err := c.Validate(catalogue)
		require.NoError(t, err, in)
		found := false
		for _, w := range warnings {
			found = found || strings.Contains(w, "without target_session_attrs=read-write")
		}
		require.Equal(t, warn, found, "%s: %v", in, warnings)
	}
	for _, attrs := range []string{"read-only", "standby", "prefer-standby"} {
		c := config.Defaults()
		c.DatabaseURL = "postgres://app:s3cret@pg-a,pg-b/latchkey?target_session_attrs=" + attrs
		_, err := c.Validate(catalogue)
		requireProblem(t, problems(t, err), "database_url", "connects to a standby")
		require.NotContains(t, err.Error(), "s3cret")
	}
}

// database.startup_wait: 60 s unless set; 0 gives up at once; negative is
// refused.
func TestStartupWait(t *testing.T) {
	require.Equal(t, 60*time.Second, config.Defaults().Database.StartupWait.D())
	cfg, err := config.Parse([]byte("database:\n  startup_wait: 0s\n"), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.Zero(t, cfg.Database.StartupWait.D())
	cfg.Database.StartupWait = config.Duration(-time.Second)
	_, err = cfg.Validate(catalogue)
	requireProblem(t, problems(t, err), "database", "startup_wait must not be negative")
}

// database.conn_max_idle_time: read from the file into the store's pool
// settings; negative is refused.
func TestConnMaxIdleTime(t *testing.T) {
	cfg, err := config.Parse([]byte("database:\n  conn_max_idle_time: 90s\n"), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, cfg.Database.ConnMaxIdleTime.D())
	cfg.Database.ConnMaxIdleTime = config.Duration(-time.Second)
	_, err = cfg.Validate(catalogue)
	requireProblem(t, problems(t, err), "database", "conn_max_idle_time, statement_timeout and startup_wait must not be negative")
}
