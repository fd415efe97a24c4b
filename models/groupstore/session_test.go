package groupstore

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

// Forward-auth's lookup, on both dialects: the same session and user as
// GET /session's, plus the user's stored groups (and only that user's),
// NULL when there are none; an unknown token is ErrNotFound.
func TestReadSessionWithGroups(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := newUser(t, s, "ann@example.com"), newUser(t, s, "bob@example.com")
		for _, u := range []*models.User{ann, bob} {
			require.NoError(t, s.store.CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: "hash-" + u.ID,
				AMR: "pwd otp", SignedIn: gNow, Expires: gNow.Add(time.Hour)}))
		}
		_, err := s.Add(ctx, bob.ID, "staff", gNow)
		require.NoError(t, err)

		var row models.SessionRow
		require.NoError(t, s.ReadSession(ctx, "hash-"+ann.ID, &row))
		require.False(t, row.Groups.Valid, "no groups: NULL, got %+v", row.Groups)

		for _, g := range []string{"staff", "Admins", "ops:oncall"} {
			_, err := s.Add(ctx, ann.ID, g, gNow)
			require.NoError(t, err)
		}
		require.NoError(t, s.ReadSession(ctx, "hash-"+ann.ID, &row))
		require.True(t, row.Groups.Valid)
		got := strings.Split(row.Groups.String, ",")
		sort.Strings(got)
		require.Equal(t, []string{"Admins", "ops:oncall", "staff"}, got)

		// The session's own columns are GET /session's lookup's.
		var plain models.SessionRow
		require.NoError(t, s.store.ReadSession(ctx, "hash-"+ann.ID, &plain))
		require.Equal(t, plain.UserID, row.UserID)
		require.Equal(t, ann.ID, row.UserID)
		require.True(t, plain.Expires.Equal(row.Expires))
		require.Equal(t, plain.CreatedAt, row.CreatedAt)
		require.Equal(t, "pwd otp", row.AMR)
		require.Equal(t, plain.Email, row.Email)
		require.Equal(t, "ann@example.com", row.Email.String)

		require.NoError(t, s.ReadSession(ctx, "hash-"+bob.ID, &row))
		require.Equal(t, "staff", row.Groups.String, "bob's own groups only")

		err = s.ReadSession(ctx, "no-such-hash", &row)
		require.True(t, errors.Is(err, models.ErrNotFound), "%v", err)
	})
}
