// Package storetest is what the tests of the store's feature packages
// (models/<feature>store) need of models: a fresh, migrated store per
// dialect, a user to hang rows on, row counts, and the check that their
// GORM models match the migrated schema. models' own tests keep their
// internal helpers: a test inside package models cannot import this
// package, which imports models.
//
// Use it with a PostgreSQL server shared by the package's tests:
//
//	var postgresURL string
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &postgresURL)) }
package storetest

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// Dialects are the dialects every store behaviour test runs on: latchkey
// promises the same answers from SQLite and PostgreSQL.
func Dialects() []string { return []string{models.DialectSQLite, models.DialectPostgres} }

// FreshConfig names a new, empty database of the dialect (not migrated): a
// file in the test's folder, or a database on the PostgreSQL server at
// postgresURL (an admin URL) dropped when the test ends.
func FreshConfig(t testing.TB, dialect, postgresURL string) models.Config {
	t.Helper()
	if dialect == models.DialectPostgres {
		return models.Config{Dialect: models.DialectPostgres, DSN: pgtest.NewDatabase(t, postgresURL)}
	}
	return models.Config{Dialect: models.DialectSQLite, DSN: filepath.Join(t.TempDir(), "latchkey.db")}
}

// EachDialect runs f as one subtest per dialect, named after it, with a
// fresh database's Config, for tests that open it themselves (several
// handles on one database, as several instances would have).
func EachDialect(t *testing.T, postgresURL string, f func(t *testing.T, c models.Config)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(d, func(t *testing.T) { f(t, FreshConfig(t, d, postgresURL)) })
	}
}

// EachStore runs f as one subtest per dialect with a fresh, migrated store.
func EachStore(t *testing.T, postgresURL string, f func(t *testing.T, s *models.Store)) {
	t.Helper()
	EachDialect(t, postgresURL, func(t *testing.T, c models.Config) { f(t, Connect(t, c)) })
}

// Connect opens c (migrating it) and closes the store when the test ends.
func Connect(t testing.TB, c models.Config) *models.Store {
	t.Helper()
	s, err := models.Connect(c)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// NewUser stores a user (with email, or none when empty) for a feature's
// rows to belong to.
func NewUser(t testing.TB, s *models.Store, email string) *models.User {
	t.Helper()
	name := "N"
	u := &models.User{ID: models.NewID(), Name: &name}
	if email != "" {
		u.Email = &email
	}
	require.NoError(t, s.DB().Create(u).Error)
	return u
}

// Count is the number of rows in table.
func Count(t testing.TB, s *models.Store, table string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, s.DB().Table(table).Count(&n).Error)
	return n
}

// RequireMigrated checks that every table, column and index the GORM
// models declare exists in s's database: a feature package's models are
// not in models' own TestMigrationsMatchModels, and its tables come from
// models/schema's steps, so this keeps the two in step.
func RequireMigrated(t testing.TB, s *models.Store, gormModels ...any) {
	t.Helper()
	db := s.DB()
	m := db.Migrator()
	for _, model := range gormModels {
		stmt := &gorm.Statement{DB: db}
		require.NoError(t, stmt.Parse(model))
		require.True(t, m.HasTable(model), stmt.Schema.Table)
		for _, f := range stmt.Schema.Fields {
			if f.DBName != "" {
				require.True(t, m.HasColumn(model, f.DBName), "%s.%s", stmt.Schema.Table, f.DBName)
			}
		}
		for _, idx := range stmt.Schema.ParseIndexes() {
			require.True(t, m.HasIndex(model, idx.Name), "%s index %s", stmt.Schema.Table, idx.Name)
		}
	}
}
