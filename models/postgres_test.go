package models

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

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
		dbURL := pgtest.NewDatabase(t, postgresURL)
		s, err := Connect(Config{Dialect: DialectPostgres, DSN: dbURL, MaxOpen: pool, MaxIdle: pool})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		admin, err := sql.Open("pgx", dbURL)
		require.NoError(t, err)
		t.Cleanup(func() { _ = admin.Close() })
		ctx := context.Background()
		u := newUser(t, s, "kim@example.com")
		now := time.Now()
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "hash", SignedIn: now, Expires: now.Add(time.Hour)}))

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
