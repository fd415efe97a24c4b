package models

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// revocationsOf is the table as a map, user id → not before (Unix seconds).
func revocationsOf(t *testing.T, s *Store) map[string]int64 {
	t.Helper()
	rows, err := s.Revocations(context.Background())
	require.NoError(t, err)
	out := map[string]int64{}
	for _, r := range rows {
		out[r.UserID] = r.NotBefore
	}
	return out
}

func TestNotBeforeRoundsUp(t *testing.T) {
	at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	require.Equal(t, at.Unix(), notBefore(at), "a whole second stays")
	require.Equal(t, at.Unix()+1, notBefore(at.Add(time.Millisecond)), "a sign-in within the revocation's second ends too")
}

// Revoking a user deletes that user's database sessions only and records
// its not-before time, which a later revocation can move forward but an
// earlier one (another operator's clock) never back; revoking everyone
// deletes every session and records AllUsers. Old rows are purged.
func TestRevokeSessions(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		ann, bob := newUser(t, s, "ann@example.com"), newUser(t, s, "bob@example.com")
		for i := range 3 {
			require.NoError(t, s.CreateSession(ctx, NewSession{UserID: ann.ID, TokenHash: fmt.Sprint("a", i), SignedIn: now, Expires: now.Add(time.Hour)}))
		}
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: bob.ID, TokenHash: "b", SignedIn: now, Expires: now.Add(time.Hour)}))
		require.Empty(t, revocationsOf(t, s))

		at := time.Unix(now.Unix()+10, 0)
		n, err := s.RevokeSessions(ctx, ann.ID, at)
		require.NoError(t, err)
		require.EqualValues(t, 3, n)
		require.EqualValues(t, 1, count(t, s, "sessions"), "bob's session stays")
		require.Equal(t, map[string]int64{ann.ID: at.Unix()}, revocationsOf(t, s))

		n, err = s.RevokeSessions(ctx, ann.ID, at.Add(-time.Hour))
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, map[string]int64{ann.ID: at.Unix()}, revocationsOf(t, s), "never moved back")
		_, err = s.RevokeSessions(ctx, ann.ID, at.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, map[string]int64{ann.ID: at.Unix() + 60}, revocationsOf(t, s), "moved forward")

		n, err = s.RevokeSessions(ctx, AllUsers, at)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		require.Zero(t, count(t, s, "sessions"))
		require.Equal(t, map[string]int64{ann.ID: at.Unix() + 60, AllUsers: at.Unix()}, revocationsOf(t, s))

		gone, err := s.PurgeRevocations(ctx, at.Add(time.Second))
		require.NoError(t, err)
		require.EqualValues(t, 1, gone)
		require.Equal(t, map[string]int64{ann.ID: at.Unix() + 60}, revocationsOf(t, s))
	})
}

// DeleteUser removes the user, its accounts, sessions and pending links
// (and nobody else's) in one go, revokes its JWT sessions, and says how
// many of each went; a second delete finds nobody.
func TestDeleteUser(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		ann, bob := newUser(t, s, "ann@example.com"), newUser(t, s, "bob@example.com")
		for _, p := range []string{"github", "idp"} {
			require.NoError(t, s.LinkAccount(ctx, &Account{UserID: ann.ID, Type: "oauth", Provider: p, ProviderAccountID: "ann-" + p}))
		}
		require.NoError(t, s.LinkAccount(ctx, &Account{UserID: bob.ID, Type: "oauth", Provider: "idp", ProviderAccountID: "bob"}))
		for i := range 3 {
			require.NoError(t, s.CreateSession(ctx, NewSession{UserID: ann.ID, TokenHash: fmt.Sprint("a", i), SignedIn: now, Expires: now.Add(time.Hour)}))
		}
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: bob.ID, TokenHash: "b", SignedIn: now, Expires: now.Add(time.Hour)}))
		require.NoError(t, s.CreateVerificationToken(ctx, "ann@example.com", "t1", now.Add(time.Hour)))
		require.NoError(t, s.CreateVerificationToken(ctx, "bob@example.com", "t2", now.Add(time.Hour)))

		d, err := s.DeleteUser(ctx, ann.ID, now)
		require.NoError(t, err)
		require.Equal(t, Deleted{Accounts: 2, Sessions: 3, Tokens: 1}, d)
		_, err = s.UserByID(ctx, ann.ID)
		require.ErrorIs(t, err, ErrNotFound)
		c, err := s.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, Counts{Users: 1, Accounts: 1, Sessions: 1, VerificationTokens: 1}, c, "bob's rows stay")
		require.Equal(t, map[string]int64{ann.ID: notBefore(now)}, revocationsOf(t, s), "ann's JWT sessions are revoked")

		_, err = s.DeleteUser(ctx, ann.ID, now)
		require.ErrorIs(t, err, ErrNotFound)
	})
}

// UnlinkAccount removes the user's link to one provider only, and reports
// a link that is not there as zero rows.
func TestUnlinkAccount(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := newUser(t, s, "ann@example.com"), newUser(t, s, "bob@example.com")
		for _, p := range []string{"github", "idp"} {
			require.NoError(t, s.LinkAccount(ctx, &Account{UserID: ann.ID, Type: "oauth", Provider: p, ProviderAccountID: "ann-" + p}))
		}
		require.NoError(t, s.LinkAccount(ctx, &Account{UserID: bob.ID, Type: "oauth", Provider: "idp", ProviderAccountID: "bob"}))

		n, err := s.UnlinkAccount(ctx, ann.ID, "idp")
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		left, err := s.AccountsOf(ctx, ann.ID)
		require.NoError(t, err)
		require.Len(t, left, 1)
		require.Equal(t, "github", left[0].Provider)
		u, err := s.UserByAccount(ctx, "idp", "bob")
		require.NoError(t, err)
		require.Equal(t, bob.ID, u.ID, "bob's link stays")

		n, err = s.UnlinkAccount(ctx, ann.ID, "idp")
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

// UnlinkAccounts removes every identity when another way in is left and
// keeps the oldest otherwise, deciding on the ways read under the user's
// row lock (the identities not counted); an unknown user is nothing to do.
func TestUnlinkAccountsKeepsTheLastWayIn(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		s := connect(t, c)
		ctx := context.Background()
		u := &User{ID: NewID()}
		require.NoError(t, s.CreateUser(ctx, u))
		for _, p := range []string{"first", "second"} {
			require.NoError(t, s.LinkAccount(ctx, &Account{UserID: u.ID, Type: "oauth", Provider: p, ProviderAccountID: p}))
		}
		var seen SignInWays
		n, kept, err := s.UnlinkAccounts(ctx, u.ID, func(w SignInWays) bool { seen = w; return false })
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		require.True(t, kept)
		require.Equal(t, SignInWays{}, seen, "no address, passkey or password; the identities not counted")
		left, err := s.AccountsOf(ctx, u.ID)
		require.NoError(t, err)
		require.Len(t, left, 1)
		require.Equal(t, "first", left[0].Provider, "the oldest stays")

		require.NoError(t, s.db.WithContext(ctx).Omit("User").Create(&Authenticator{ID: NewID(), UserID: u.ID, CredentialID: "k", PublicKey: []byte{1}, CreatedAt: time.Now().UTC()}).Error)
		n, kept, err = s.UnlinkAccounts(ctx, u.ID, func(w SignInWays) bool { return w.Passkeys > 0 })
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		require.False(t, kept)

		n, kept, err = s.UnlinkAccounts(ctx, NewID(), func(SignInWays) bool { return true })
		require.NoError(t, err)
		require.Zero(t, n)
		require.False(t, kept)
	})
}
