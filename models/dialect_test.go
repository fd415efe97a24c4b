package models

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// The store's behaviour tests run once per dialect, as subtests named after
// it: latchkey promises the same answers from SQLite and PostgreSQL.

// testDialects are the dialects every store behaviour test runs on.
var testDialects = []string{DialectSQLite, DialectPostgres}

// freshConfig names a new, empty database of the dialect (not migrated): a
// file in the test's folder, or a database on the shared PostgreSQL server
// dropped when the test ends.
func freshConfig(t *testing.T, dialect string) Config {
	t.Helper()
	if dialect == DialectPostgres {
		return Config{Dialect: DialectPostgres, DSN: pgtest.NewDatabase(t, postgresURL)}
	}
	return Config{Dialect: DialectSQLite, DSN: filepath.Join(t.TempDir(), "latchkey.db")}
}

// eachDialect runs f as one subtest per dialect with a fresh database's
// Config, for tests that open it themselves (several handles, reopening).
func eachDialect(t *testing.T, f func(t *testing.T, c Config)) {
	t.Helper()
	for _, d := range testDialects {
		t.Run(d, func(t *testing.T) { f(t, freshConfig(t, d)) })
	}
}

// eachStore runs f as one subtest per dialect with a fresh, migrated store.
func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	eachDialect(t, func(t *testing.T, c Config) { f(t, connect(t, c)) })
}

// connect opens c and closes the store when the test ends.
func connect(t *testing.T, c Config) *Store {
	t.Helper()
	s, err := Connect(c)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}
