package scalefill

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/adminstore"
	"github.com/latchkey-auth/latchkey/models/storetest"
)

// Schema step 14 (the listings' keyset indexes) upgrades a filled database
// of step 13: the indexes are built over the rows there, the next start
// changes nothing, and the pages then search them.
func TestStep14UpgradesFilledDatabase(t *testing.T) {
	storetest.EachDialect(t, postgresURL, func(t *testing.T, c models.Config) {
		ctx := context.Background()
		s := storetest.Connect(t, c)
		now := time.Now()
		require.NoError(t, Fill(ctx, s, Sizes{Users: 2_000, Sessions: 10_000}, now, nil))
		undoIndexStep(t, s, 14, "idx_users_created_at_id", "idx_sessions_created_at_id")
		db := s.DB()
		require.NoError(t, s.Migrate(ctx))
		require.NoError(t, s.Migrate(ctx), "a later start finds the step applied")
		st, err := s.Status(ctx)
		require.NoError(t, err)
		require.Empty(t, st.Pending)
		m := db.Migrator()
		require.True(t, m.HasIndex("users", "idx_users_created_at_id"))
		require.True(t, m.HasIndex("sessions", "idx_sessions_created_at_id"))

		ad := adminstore.New(s)
		p := adminstore.Page{Limit: 500}
		var users, sessions int
		for {
			page, next, err := ad.UserOverviews(ctx, now, p)
			require.NoError(t, err)
			users += len(page)
			if p.After = next; next == "" {
				break
			}
		}
		require.Equal(t, 2_000, users)
		p = adminstore.Page{Limit: 500}
		for {
			page, next, err := ad.SessionListings(ctx, "", now, p)
			require.NoError(t, err)
			sessions += len(page)
			if p.After = next; next == "" {
				break
			}
		}
		require.Equal(t, 5_000, sessions, "the live half")
	})
}

// undoIndexStep takes s back to the database a latchkey before schema
// step version left, for a step that only adds the indexes named: they are
// dropped and the step is pending again.
func undoIndexStep(t *testing.T, s *models.Store, version int, indexes ...string) {
	t.Helper()
	db := s.DB()
	for _, ix := range indexes {
		require.NoError(t, db.Exec("DROP INDEX "+ix).Error)
	}
	require.NoError(t, db.Exec("DELETE FROM schema_migrations WHERE version = ?", version).Error)
	st, err := s.Status(context.Background())
	require.NoError(t, err)
	require.Len(t, st.Pending, 1)
}
