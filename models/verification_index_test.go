package models

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// requireIndexedHashLookup asks SQLite how it runs VerificationTokenByHash's
// query (GET /callback/email): it must search an index on token_hash, not
// scan the table (22 ms with 300k pending links).
func requireIndexedHashLookup(t *testing.T, db *gorm.DB) {
	t.Helper()
	// The same query VerificationTokenByHash builds.
	query := db.ToSQL(func(tx *gorm.DB) *gorm.DB {
		return tx.Where("token_hash = ?", "h").Take(&VerificationToken{})
	})
	var plan []struct{ Detail string }
	require.NoError(t, db.Raw("EXPLAIN QUERY PLAN "+query).Scan(&plan).Error)
	require.NotEmpty(t, plan)
	var details []string
	for _, row := range plan {
		details = append(details, row.Detail)
	}
	got := strings.Join(details, "; ")
	require.Regexp(t, `^SEARCH verification_tokens USING (COVERING )?INDEX \S+ \(token_hash=\?\)$`, got, query)
	require.NotContains(t, got, "SCAN", query)
}

func TestVerificationTokenByHashUsesIndex(t *testing.T) {
	s := open(t)
	requireIndexedHashLookup(t, s.db)
}

// A database created by an earlier latchkey (primary key on identifier,
// token_hash only) gets the index on the next start. Rows sharing a hash are
// dropped first, or the unique index could not be created: such a link is
// ambiguous (which address did it sign in?), so no copy of it is kept.
func TestOldDatabaseGetsTokenHashIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := gorm.Open(sqlite.Open(path), &gorm.Config{Logger: logger.Discard})
	require.NoError(t, err)
	exp := time.Now().Add(time.Hour).UTC()
	for _, stmt := range []string{
		"CREATE TABLE `verification_tokens` (`identifier` text,`token_hash` text,`expires` datetime NOT NULL,PRIMARY KEY (`identifier`,`token_hash`))",
		"CREATE INDEX `idx_verification_tokens_expires` ON `verification_tokens`(`expires`)",
		"CREATE UNIQUE INDEX `idx_verification_identifier_token` ON `verification_tokens`(`identifier`,`token_hash`)",
	} {
		require.NoError(t, old.Exec(stmt).Error)
	}
	for _, row := range [][2]string{{"keep@example.com", "h-keep"}, {"a@example.com", "h-dup"}, {"b@example.com", "h-dup"}} {
		require.NoError(t, old.Exec("INSERT INTO verification_tokens (identifier, token_hash, expires) VALUES (?, ?, ?)", row[0], row[1], exp).Error)
	}
	sqlDB, err := old.DB()
	require.NoError(t, err)
	require.NoError(t, sqlDB.Close())

	s := openAt(t, path)
	requireIndexedHashLookup(t, s.db)
	ctx := context.Background()
	got, err := s.VerificationTokenByHash(ctx, "h-keep")
	require.NoError(t, err)
	require.Equal(t, "keep@example.com", got.Identifier)
	_, err = s.VerificationTokenByHash(ctx, "h-dup")
	require.ErrorIs(t, err, ErrNotFound)
	require.EqualValues(t, 1, count(t, s, "verification_tokens"))

	// Later starts find the index and change nothing.
	require.NoError(t, s.Migrate(context.Background()))
	require.EqualValues(t, 1, count(t, s, "verification_tokens"))
}

// The PostgreSQL counterpart: both lookups by token hash (the e-mail
// callback's and GET /session's) search their unique token_hash index.
// Sequential scans are switched off for the EXPLAIN, or the planner would
// rightly scan the test's empty tables; with a usable index it must then
// name that index: without it PostgreSQL still shows an "Index Cond" on
// token_hash, but over the whole (identifier, token_hash) index.
func TestPostgresTokenHashLookupsUseIndex(t *testing.T) {
	s := connect(t, freshConfig(t, DialectPostgres))
	for _, tc := range []struct {
		name, query, index string
	}{
		{"verification token", s.db.ToSQL(func(tx *gorm.DB) *gorm.DB {
			return tx.Where("token_hash = ?", "h").Take(&VerificationToken{})
		}), "idx_verification_tokens_token_hash"},
		{"session and user", strings.Replace(s.sessionAndUserSQL(""), "$1", "'h'", 1), "idx_sessions_token_hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var plan []string
			err := s.db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Exec("SET LOCAL enable_seqscan = off").Error; err != nil {
					return err
				}
				return tx.Raw("EXPLAIN " + tc.query).Scan(&plan).Error
			})
			require.NoError(t, err)
			got := strings.Join(plan, "\n")
			require.Regexp(t, `Index (Only )?Scan using `+tc.index+` on `, got, tc.query)
			require.Contains(t, got, "Index Cond: ((token_hash)::text = 'h'::text)")
			require.NotContains(t, got, "Seq Scan")

			var def string
			require.NoError(t, s.db.Raw("SELECT indexdef FROM pg_indexes WHERE indexname = ?", tc.index).Scan(&def).Error)
			require.Regexp(t, `^CREATE UNIQUE INDEX `+tc.index+` ON public\.\w+ USING btree \(token_hash\)$`, def)
		})
	}
}
