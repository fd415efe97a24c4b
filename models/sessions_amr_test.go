package models

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSessionAMR: a session keeps the sign-in methods it was started with
// (amr, e.g. a second factor's "otp mfa"), on every read.
func TestSessionAMR(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "amr@example.com")
		exp := time.Now().Add(time.Hour)
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "two", AMR: "pwd otp mfa", SignedIn: time.Now(), Expires: exp}))
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "one", SignedIn: time.Now(), Expires: exp}))
		var row SessionRow
		require.NoError(t, s.ReadSession(ctx, "two", &row))
		require.Equal(t, "pwd otp mfa", row.AMR)
		require.NoError(t, s.ReadSession(ctx, "one", &row))
		require.Empty(t, row.AMR, "a reused row does not keep the last one's methods")
		got, err := s.SessionAndUser(ctx, "two")
		require.NoError(t, err)
		require.Equal(t, "pwd otp mfa", got.AMR)
		list, err := s.SessionsOf(ctx, u.ID)
		require.NoError(t, err)
		require.Len(t, list, 2)
	})
}
