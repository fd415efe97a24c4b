package scalefill

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/groupstore"
	"github.com/latchkey-auth/latchkey/models/storetest"
)

// Schema step 15 (SQLite's covering indexes of GET /session's lookup)
// upgrades a filled database of step 14: the indexes are built over the
// rows there, the next start changes nothing, and the lookup then reads
// the two indexes only, never the sessions or users tables.
func TestStep15CoversTheSessionLookup(t *testing.T) {
	ctx := context.Background()
	c := models.Config{Dialect: models.DialectSQLite, DSN: t.TempDir() + "/latchkey.db"}
	s := storetest.Connect(t, c)
	now := time.Now()
	require.NoError(t, Fill(ctx, s, Sizes{Users: 2_000, Sessions: 10_000}, now, nil))
	undoIndexStep(t, s, 15, "idx_sessions_lookup", "idx_users_lookup")
	require.NoError(t, s.Close())

	// The next start applies it, and prepares the lookup against it.
	s = storetest.Connect(t, c)
	require.NoError(t, s.Migrate(ctx), "a later start finds the step applied")
	st, err := s.Status(ctx)
	require.NoError(t, err)
	require.Empty(t, st.Pending)

	plan := explain(t, s, statement{s.SessionLookupSQL(""), []any{TokenHash(SessionToken(0))}})
	require.Regexp(t, `SEARCH s USING COVERING INDEX idx_sessions_lookup \(token_hash=\?\)`, plan)
	require.Regexp(t, `SEARCH u USING COVERING INDEX idx_users_lookup \(id=\?\)`, plan)
	// Forward-auth's variant reads the same two leaves and the user's
	// groups from user_groups' key.
	plan = explain(t, s, statement{groupstore.New(s).SessionSQL(), []any{TokenHash(SessionToken(0))}})
	require.Regexp(t, `SEARCH s USING COVERING INDEX idx_sessions_lookup \(token_hash=\?\)`, plan)
	require.Regexp(t, `SEARCH g USING COVERING INDEX sqlite_autoindex_user_groups_1 \(user_id=\?\)`, plan)

	var row models.SessionRow
	require.NoError(t, s.ReadSession(ctx, TokenHash(SessionToken(2)), &row))
	require.Equal(t, UserID(SessionUser(2, Sizes{Users: 2_000})), row.UserID)
	require.Equal(t, Email(SessionUser(2, Sizes{Users: 2_000})), row.Email.String)
	require.ErrorIs(t, s.ReadSession(ctx, TokenHash("no such session"), &row), models.ErrNotFound)
}
