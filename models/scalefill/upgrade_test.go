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
		// Back to the database a latchkey before step 14 left.
		db := s.DB()
		require.NoError(t, db.Exec("DROP INDEX idx_users_created_at_id").Error)
		require.NoError(t, db.Exec("DROP INDEX idx_sessions_created_at_id").Error)
		require.NoError(t, db.Exec("DELETE FROM schema_migrations WHERE version = 14").Error)
		st, err := s.Status(ctx)
		require.NoError(t, err)
		require.Len(t, st.Pending, 1)

		require.NoError(t, s.Migrate(ctx))
		require.NoError(t, s.Migrate(ctx), "a later start finds the step applied")
		st, err = s.Status(ctx)
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
