package config_test

import (
	"path/filepath"
	"testing"

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

// A PostgreSQL password never reaches a log line, wherever the URL keeps it.
func TestRedactedDatabaseURL(t *testing.T) {
	cases := map[string]string{
		"postgres://app:s3cr%40t@db:5432/auth?sslmode=require": "postgres://app:***@db:5432/auth?sslmode=require",
		"postgresql://app@db/auth":                             "postgresql://app@db/auth",
		"postgres://db/auth?user=app&password=s3cret":          "postgres://db/auth?password=***&user=app",
		"postgres://app:s3cret@db:not-a-port/auth":             "postgres://***@db:not-a-port/auth",
		"host=db dbname=auth password=s3cret user=app":         "host=db dbname=auth password=*** user=app",
		"host=db password='s3 cr et' user=app":                 "host=db password=*** user=app",
		`host=db password='it\'s s3cret' user=app`:             "host=db password=*** user=app",
	}
	for in, want := range cases {
		c := config.Config{DatabaseURL: in}
		got := c.RedactedDatabaseURL()
		require.Equal(t, want, got, in)
		require.NotContains(t, got, "s3c", in)
	}
}
