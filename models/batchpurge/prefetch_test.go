package batchpurge

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// The SQLite purge reads each batch's pages before it deletes them: one
// statement per index of the table, each reaching the batch's entries
// through that index (an index on an expression has no column to find
// them by), and the purge still deletes exactly the expired rows.
func TestSQLitePurgeReadsAheadThroughEveryIndex(t *testing.T) {
	db, err := gorm.Open(sqlite.Open(filepath.Join(t.TempDir(), "p.db")), &gorm.Config{Logger: logger.Discard})
	require.NoError(t, err)
	for _, q := range []string{
		"CREATE TABLE t (id text PRIMARY KEY, token_hash text NOT NULL, user_id text NOT NULL, expires datetime NOT NULL)",
		"CREATE INDEX idx_t_expires ON t(expires)",
		"CREATE UNIQUE INDEX idx_t_token_hash ON t(token_hash)",
		"CREATE INDEX idx_t_user ON t(user_id, expires)",
		"CREATE INDEX idx_t_lower ON t(lower(user_id))",
	} {
		require.NoError(t, db.Exec(q).Error)
	}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for i := range 300 {
		exp := now.Add(time.Hour)
		if i%3 == 0 {
			exp = now.Add(-time.Duration(i+1) * time.Minute)
		}
		require.NoError(t, db.Exec("INSERT INTO t VALUES (?, ?, ?, ?)", fmt.Sprint("id-", i), fmt.Sprint("hash-", i), fmt.Sprint("user-", i%7), exp).Error)
	}

	reads, err := prefetchSQL(db, "t", " IN (SELECT %s FROM t WHERE expires < ? ORDER BY expires LIMIT ?)")
	require.NoError(t, err)
	require.Len(t, reads, 4, "the key's index, expires, token_hash, user_id; not lower(user_id)")
	var named []string
	for _, q := range reads {
		var found int64
		require.NoError(t, db.Raw(q, now, 10).Row().Scan(&found))
		require.GreaterOrEqual(t, found, int64(10), q)
		var plan []struct{ Detail string }
		require.NoError(t, db.Raw("EXPLAIN QUERY PLAN "+q, now, 10).Scan(&plan).Error)
		var lines []string
		for _, p := range plan {
			lines = append(lines, p.Detail)
		}
		require.NotContains(t, strings.Join(lines, "\n"), "SCAN t\n", q)
		named = append(named, strings.Join(lines, "\n"))
	}
	all := strings.Join(named, "\n")
	for _, idx := range []string{"sqlite_autoindex_t_1", "idx_t_expires", "idx_t_token_hash", "idx_t_user"} {
		require.Contains(t, all, idx)
	}
	require.NotContains(t, all, "idx_t_lower")

	gone, err := purgeSQLite(context.Background(), db, "t", "id", now)
	require.NoError(t, err)
	require.EqualValues(t, 100, gone)
	var left, expired int64
	require.NoError(t, db.Raw("SELECT count(*), count(*) FILTER (WHERE expires < ?) FROM t", now).Row().Scan(&left, &expired))
	require.EqualValues(t, 200, left)
	require.Zero(t, expired)
}
