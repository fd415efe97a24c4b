package models

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSessionDeviceAndLastSeen: a session keeps the device and network it
// was made with; its last use starts at the sign-in and moves with each
// extension (ExtendSession's seen), on both dialects. GET /session's lookup
// reads none of them, so the account page's columns cost it nothing.
func TestSessionDeviceAndLastSeen(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "seen@example.com")
		signedIn := time.Date(2031, 2, 1, 9, 8, 7, 654_321_987, time.FixedZone("PST", -8*3600))
		exp := signedIn.Add(time.Hour)
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "d", AMR: "pwd",
			Device: "Firefox 128 on Linux", Network: "203.0.113.0/24", SignedIn: signedIn, Expires: exp}))
		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "bare", SignedIn: signedIn, Expires: exp}))

		byHash := func(hash string) Session {
			t.Helper()
			var row Session
			require.NoError(t, s.db.Where("token_hash = ?", hash).Take(&row).Error)
			return row
		}
		row := byHash("d")
		require.Equal(t, "Firefox 128 on Linux", row.Device)
		require.Equal(t, "203.0.113.0/24", row.Network)
		require.Equal(t, "pwd", row.AMR)
		require.NotNil(t, row.LastSeen)
		require.True(t, signedIn.Truncate(time.Microsecond).Equal(*row.LastSeen), "last seen at the sign-in: %v", row.LastSeen)
		bare := byHash("bare")
		require.Empty(t, bare.Device)
		require.Empty(t, bare.Network)

		seen := signedIn.Add(20*time.Minute + 789)
		later := exp.Add(20 * time.Minute)
		require.NoError(t, s.ExtendSession(ctx, "d", later, seen))
		row = byHash("d")
		require.True(t, seen.Truncate(time.Microsecond).Equal(*row.LastSeen), "last seen moves with the extension: %v", row.LastSeen)
		require.True(t, later.Truncate(time.Microsecond).Equal(row.Expires), "expires %v", row.Expires)
		require.True(t, signedIn.Truncate(time.Microsecond).Equal(row.CreatedAt), "the sign-in time stays")
		require.Equal(t, "Firefox 128 on Linux", row.Device, "an extension keeps the device")
		require.True(t, signedIn.Truncate(time.Microsecond).Equal(*byHash("bare").LastSeen), "only that session moved")

		var r SessionRow
		require.NoError(t, s.ReadSession(ctx, "d", &r))
		require.Equal(t, u.ID, r.UserID)
		require.NotContains(t, s.sessionAndUserSQL(""), "device")
		require.NotContains(t, s.sessionAndUserSQL(""), "last_seen")
	})
}
