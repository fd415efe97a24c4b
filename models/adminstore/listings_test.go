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

		users, next, err := s.UserOverviews(ctx, now, Page{})
		require.Empty(t, next)
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

		all, _, err := s.SessionListings(ctx, "", now, Page{Limit: 100})
		require.NoError(t, err)
		require.Len(t, all, 3)
		mine, _, err := s.SessionListings(ctx, ann.ID, now, Page{})
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

// Paging by keyset: pages of any limit, put end to end, are the whole
// listing in its order, also where rows share a created_at (the id breaks
// the tie); a cursor no page printed is refused.
func TestListingsPaged(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		base := now.Add(-time.Hour)
		var ids []string
		for i := range 23 {
			u := storetest.NewUser(t, s.store, "")
			// three users per created_at: ties the id orders
			at := models.DBTime(base.Add(time.Duration(i/3) * time.Second))
			require.NoError(t, s.store.DB().Model(u).Update("created_at", at).Error)
			ids = append(ids, u.ID)
			for j := range 2 {
				exp := now.Add(time.Hour)
				if j == 1 && i%2 == 0 {
					exp = now.Add(-time.Minute) // expired: not listed
				}
				require.NoError(t, s.store.CreateSession(ctx, models.NewSession{UserID: u.ID, TokenHash: models.NewID(),
					SignedIn: base.Add(time.Duration(i/4) * time.Second), Expires: exp}))
			}
		}
		allUsers, next, err := s.UserOverviews(ctx, now, Page{})
		require.NoError(t, err)
		require.Empty(t, next)
		require.Len(t, allUsers, 23)
		allSessions, _, err := s.SessionListings(ctx, "", now, Page{})
		require.NoError(t, err)
		require.Len(t, allSessions, 23*2-12)
		for _, limit := range []int{1, 5, 23, 100} {
			var gotU []UserOverview
			p := Page{Limit: limit}
			for pages := 0; ; pages++ {
				require.Less(t, pages, 30)
				page, next, err := s.UserOverviews(ctx, now, p)
				require.NoError(t, err)
				require.LessOrEqual(t, len(page), limit)
				gotU = append(gotU, page...)
				if next == "" {
					break
				}
				p.After = next
			}
			require.Equal(t, allUsers, gotU, "limit %d", limit)

			var gotS []SessionListing
			p = Page{Limit: limit}
			for pages := 0; ; pages++ {
				require.Less(t, pages, 40)
				page, next, err := s.SessionListings(ctx, "", now, p)
				require.NoError(t, err)
				gotS = append(gotS, page...)
				if next == "" {
					break
				}
				p.After = next
			}
			require.Equal(t, allSessions, gotS, "limit %d", limit)
		}
		for i := 1; i < len(allSessions); i++ {
			a, b := allSessions[i-1], allSessions[i]
			require.True(t, a.SignedIn.After(b.SignedIn) || a.SignedIn.Equal(b.SignedIn) && a.ID > b.ID, "most recent first, then id")
		}
		_, _, err = s.UserOverviews(ctx, now, Page{Limit: 5, After: "nonsense"})
		require.ErrorIs(t, err, ErrBadCursor)
		_, _, err = s.SessionListings(ctx, "", now, Page{Limit: 5, After: "!!.x"})
		require.ErrorIs(t, err, ErrBadCursor)
	})
}
