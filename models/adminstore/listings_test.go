package adminstore

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
	"github.com/latchkey-auth/latchkey/models/storetest"
)

// postgresURL is the admin URL of the PostgreSQL server the tests share.
var postgresURL string

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &postgresURL)) }

func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) { f(t, New(s)) })
}

func newUser(t *testing.T, s *Store, email string) *models.User {
	t.Helper()
	name := "N"
	u := &models.User{Name: &name}
	if email != "" {
		u.Email = &email
	}
	require.NoError(t, s.store.CreateUser(context.Background(), u))
	return u
}

// PendingSignIns counts one address's live links, whatever its case;
// RevokedAt is the user's "not before".
func TestPendingSignInsAndRevokedAt(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		ann := newUser(t, s, "ann@example.com")
		require.NoError(t, s.store.CreateVerificationToken(ctx, "ann@example.com", "t1", now.Add(time.Hour)))
		require.NoError(t, s.store.CreateVerificationToken(ctx, "ann@example.com", "t0", now.Add(-time.Hour)))
		require.NoError(t, s.store.CreateVerificationToken(ctx, "bob@example.com", "t2", now.Add(time.Hour)))
		pending, err := s.PendingSignIns(ctx, "ANN@example.com", now)
		require.NoError(t, err)
		require.EqualValues(t, 1, pending, "the expired link and bob's are not counted")

		revoked, err := s.RevokedAt(ctx, ann.ID)
		require.NoError(t, err)
		require.True(t, revoked.IsZero(), "no revocation yet")
		_, err = s.store.RevokeSessions(ctx, ann.ID, now)
		require.NoError(t, err)
		revoked, err = s.RevokedAt(ctx, ann.ID)
		require.NoError(t, err)
		require.False(t, revoked.Before(now.Truncate(time.Second)))
	})
}

func TestFindUser(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := newUser(t, s, "ann@example.com")
		for _, ref := range []string{ann.ID, "ann@example.com", "Ann@Example.COM"} {
			u, err := s.FindUser(ctx, ref)
			require.NoError(t, err, ref)
			require.Equal(t, ann.ID, u.ID)
		}
		for _, ref := range []string{"nobody@example.com", models.NewID(), ""} {
			_, err := s.FindUser(ctx, ref)
			require.ErrorIs(t, err, models.ErrNotFound, ref)
		}
	})
}

// The lists show live rows only: expired sessions are not counted or
// listed, and a user filter keeps to that user.
func TestUserOverviewsAndSessionListings(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		ann, bob := newUser(t, s, "ann@example.com"), newUser(t, s, "")
		require.NoError(t, s.store.LinkAccount(ctx, &models.Account{UserID: bob.ID, Type: "oauth", Provider: "idp", ProviderAccountID: "bob"}))
		require.NoError(t, s.store.CreateSession(ctx, models.NewSession{UserID: ann.ID, TokenHash: "a1", SignedIn: now.Add(-time.Minute), Expires: now.Add(time.Hour)}))
		require.NoError(t, s.store.CreateSession(ctx, models.NewSession{UserID: ann.ID, TokenHash: "a2", SignedIn: now, Expires: now.Add(time.Hour)}))
		require.NoError(t, s.store.CreateSession(ctx, models.NewSession{UserID: ann.ID, TokenHash: "old", SignedIn: now.Add(-2 * time.Hour), Expires: now.Add(-time.Hour)}))
		require.NoError(t, s.store.CreateSession(ctx, models.NewSession{UserID: bob.ID, TokenHash: "b", SignedIn: now, Expires: now.Add(time.Hour)}))

		users, err := s.UserOverviews(ctx, now)
		require.NoError(t, err)
		require.Len(t, users, 2)
		byID := map[string]UserOverview{}
		for _, u := range users {
			byID[u.ID] = u
		}
		require.Equal(t, []string{}, byID[ann.ID].Providers)
		require.EqualValues(t, 2, byID[ann.ID].Sessions, "the expired one is not counted")
		require.Equal(t, []string{"idp"}, byID[bob.ID].Providers)
		require.EqualValues(t, 1, byID[bob.ID].Sessions)

		all, err := s.SessionListings(ctx, "", now)
		require.NoError(t, err)
		require.Len(t, all, 3)
		mine, err := s.SessionListings(ctx, ann.ID, now)
		require.NoError(t, err)
		require.Len(t, mine, 2)
		require.Equal(t, "ann@example.com", *mine[0].Email)
		require.Equal(t, ann.ID, mine[0].UserID)
		require.Len(t, mine[0].ID, 36)
		require.WithinDuration(t, now, mine[0].SignedIn, time.Millisecond, "most recent sign-in first")
		require.WithinDuration(t, now.Add(time.Hour), mine[0].Expires, time.Millisecond)
		require.True(t, mine[1].SignedIn.Before(mine[0].SignedIn))
	})
}
