package models

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// The server ends every connection of the pool, as a restart or a
// fail-over does (pg_terminate_backend sends each the FATAL admin_shutdown
// a fast shutdown sends), while they are fresh enough that pgx would not
// ping them before reuse. The session lookup right after still answers,
// and so does every later statement: one statement meets a dead
// connection, the lookup makes that one again, and the pool pings the
// other connections before reusing them.
func TestPoolSurvivesEndedConnections(t *testing.T) {
	for _, pool := range []int{1, 4} {
		s, admin, u := pooledSession(t, Config{MaxOpen: pool, MaxIdle: pool})
		ctx := context.Background()

		for round := range 3 {
			// Every connection used just now, and more than once: pgx pings a
			// connection on its first reuse, whatever its idle time.
			for range 3 {
				var wg sync.WaitGroup
				for range pool {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, _ = s.SessionAndUser(ctx, "hash")
					}()
				}
				wg.Wait()
			}
			var ended int
			require.NoError(t, admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&ended))
			require.Positive(t, ended, "pool %d, round %d", pool, round)
			require.Eventually(t, func() bool { // until they are gone, as after a restart
				var left int
				err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&left)
				return err == nil && left == 0
			}, 30*time.Second, 5*time.Millisecond)

			row, err := s.SessionAndUser(ctx, "hash")
			require.NoError(t, err, "pool %d, round %d: the first lookup", pool, round)
			require.Equal(t, u.ID, row.UserID)
			for i := range pool + 1 {
				_, err = s.Count(ctx)
				require.NoError(t, err, "pool %d, round %d, statement %d", pool, round, i)
			}
		}
	}
}

// Sixteen clients read sessions at once through a pool with the default
// settings. The pool keeps the connections it opened: no new PostgreSQL
// backend after the first ones. With fewer connections kept idle than
// open (the old default, 10 of 20), every dip of the load closed one and
// every rise opened one, a new backend every few dozen requests.
func TestPoolKeepsItsConnectionsUnderLoad(t *testing.T) {
	s, admin, u := pooledSession(t, Config{})
	ctx := context.Background()
	backends := func() int64 {
		var n int64
		require.NoError(t, admin.QueryRowContext(ctx, `SELECT sessions FROM pg_stat_database WHERE datname = current_database()`).Scan(&n))
		return n
	}
	before := backends()

	const clients, lookups = 16, 300
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range lookups {
				row, err := s.SessionAndUser(ctx, "hash")
				if !assert.NoError(t, err) || !assert.Equal(t, u.ID, row.UserID) {
					return
				}
			}
		}()
	}
	wg.Wait()

	sqlDB, err := s.DB().DB()
	require.NoError(t, err)
	st := sqlDB.Stats()
	require.Zero(t, st.MaxIdleClosed, "connections closed because more were idle than kept")
	require.LessOrEqual(t, st.OpenConnections, 20)
	// Backends that ended are counted when they end; those still open may
	// be counted a little later, so this bounds from one side only.
	require.LessOrEqual(t, backends()-before, int64(clients), "new PostgreSQL backends during %d lookups", clients*lookups)
}

// pooledSession is a new PostgreSQL database opened with the pool settings
// of c, a user with a session whose token hash is "hash", and a
// connection of its own to the same database.
func pooledSession(t *testing.T, c Config) (*Store, *sql.DB, *User) {
	dbURL := pgtest.NewDatabase(t, postgresURL)
	c.Dialect, c.DSN = DialectPostgres, dbURL
	s, err := Connect(c)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	admin, err := sql.Open("pgx", dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	u := newUser(t, s, "kim@example.com")
	now := time.Now()
	require.NoError(t, s.CreateSession(context.Background(), NewSession{UserID: u.ID, TokenHash: "hash", SignedIn: now, Expires: now.Add(time.Hour)}))
	return s, admin, u
}
