package models

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Ready fails while the SQLite file the pool opened is not at its path
// (removed, moved, replaced), although a query on the open connections
// would still succeed, and passes again once it is back.
func TestReadyFollowsTheSQLiteFile(t *testing.T) {
	c := freshConfig(t, DialectSQLite)
	s := connect(t, c)
	ctx := context.Background()
	require.NoError(t, s.Ready(ctx))

	require.NoError(t, os.Rename(c.DSN, c.DSN+".moved"))
	require.NoError(t, s.Ping(ctx), "the open connections notice nothing")
	require.ErrorContains(t, s.Ready(ctx), "database file")

	require.NoError(t, os.WriteFile(c.DSN, nil, 0o600))
	require.ErrorContains(t, s.Ready(ctx), "was replaced", "another file at the path is not the database")

	require.NoError(t, os.Rename(c.DSN+".moved", c.DSN))
	require.NoError(t, s.Ready(ctx))

	if os.Geteuid() != 0 { // root opens any file whatever its mode
		require.NoError(t, os.Chmod(c.DSN, 0o400))
		require.ErrorContains(t, s.Ready(ctx), "permission denied")
		require.NoError(t, os.Chmod(c.DSN, 0o600))
	}
}

// Ready reads through the pool within the context's deadline, on both
// dialects; an expired deadline fails it.
func TestReadyQueriesTheDatabase(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		require.NoError(t, s.Ready(context.Background()))
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		require.Error(t, s.Ready(ctx))
	})
}

// OnError hears of statements the database fails, through GORM and
// through GET /session's own lookup, and not of the answers the code
// expects: no row, a duplicate it handles.
func TestOnErrorCountsFailedStatements(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		var n atomic.Int64
		c.OnError = func() { n.Add(1) }
		s := connect(t, c)
		ctx := context.Background()

		u := newUser(t, s, "dup@example.com")
		_, err := s.UserByEmail(ctx, "nobody@example.com")
		require.ErrorIs(t, err, ErrNotFound)
		var row SessionRow
		require.ErrorIs(t, s.ReadSession(ctx, "no-such-hash", &row), ErrNotFound)
		requireUnique(t, s.db.Create(&User{ID: u.ID}).Error)
		require.Zero(t, n.Load(), "expected answers are not failures")

		require.Error(t, s.db.WithContext(ctx).Exec("SELECT * FROM no_such_table").Error)
		require.Equal(t, int64(1), n.Load())

		require.NoError(t, s.sessionStmt.Close()) // the next lookup fails
		require.Error(t, s.ReadSession(ctx, "any", &row))
		require.Equal(t, int64(2), n.Load())
		s.sessionStmt = nil
	})
}
