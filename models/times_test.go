package models

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTimesRoundTrip: an expiry reads back as the instant written, to the
// microsecond (PostgreSQL's timestamptz keeps no more), whatever zone it was
// given in, through GORM and through the prepared session lookup alike.
func TestTimesRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "t@example.com")
		exp := time.Date(2031, 3, 4, 5, 6, 7, 123_456_789, time.FixedZone("", -(7*3600+30*60)))
		want := exp.Truncate(time.Microsecond)

		require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: "h", SignedIn: time.Now(), Expires: exp}))
		row, err := s.SessionAndUser(ctx, "h")
		require.NoError(t, err)
		require.True(t, want.Equal(row.Expires), "session lookup: %v, want %v", row.Expires, want)
		rows, err := s.SessionsOf(ctx, u.ID)
		require.NoError(t, err)
		require.True(t, want.Equal(rows[0].Expires), "GORM read: %v, want %v", rows[0].Expires, want)

		later := exp.Add(36*time.Hour + 987*time.Nanosecond)
		require.NoError(t, s.ExtendSession(ctx, "h", later, time.Now()))
		row, err = s.SessionAndUser(ctx, "h")
		require.NoError(t, err)
		require.True(t, later.Truncate(time.Microsecond).Equal(row.Expires), "extended: %v", row.Expires)

		require.NoError(t, s.CreateVerificationToken(ctx, "t@example.com", "v", exp))
		tok, err := s.VerificationTokenByHash(ctx, "v")
		require.NoError(t, err)
		require.True(t, want.Equal(tok.Expires), "verification token: %v, want %v", tok.Expires, want)
		// A link put back after a failure (its expiry as read) reads the same again.
		require.NoError(t, s.DeleteVerificationToken(ctx, tok.Identifier, tok.TokenHash))
		require.NoError(t, s.CreateVerificationToken(ctx, tok.Identifier, tok.TokenHash, tok.Expires))
		again, err := s.VerificationTokenByHash(ctx, "v")
		require.NoError(t, err)
		require.True(t, tok.Expires.Equal(again.Expires))

		verified := exp
		created := &User{Email: ptr("v@example.com"), EmailVerified: &verified}
		require.NoError(t, s.CreateUser(ctx, created))
		got, err := s.UserByID(ctx, created.ID)
		require.NoError(t, err)
		require.True(t, created.EmailVerified.Equal(*got.EmailVerified), "emailVerified %v, stored %v", created.EmailVerified, got.EmailVerified)
		require.True(t, created.CreatedAt.Equal(got.CreatedAt), "createdAt %v, stored %v", created.CreatedAt, got.CreatedAt)

		redeemAt := exp.Add(-time.Hour).Add(555 * time.Nanosecond)
		user, _, err := s.RedeemVerificationToken(ctx, "t@example.com", "v", redeemAt)
		require.NoError(t, err)
		stored, err := s.UserByID(ctx, user.ID)
		require.NoError(t, err)
		require.True(t, user.EmailVerified.Equal(*stored.EmailVerified),
			"emailVerified returned %v, stored %v", user.EmailVerified, stored.EmailVerified)
	})
}

// TestExpiryBoundaries: "expires > now" (a link is redeemable) and
// "expires < now" (a row is purged) give the same answers on both dialects,
// down to the microsecond and below it.
func TestExpiryBoundaries(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name       string
		expires    time.Time
		redeemable bool
		purged     bool
	}{
		{"a microsecond before", now.Add(-time.Microsecond), false, true},
		{"a nanosecond before", now.Add(-time.Nanosecond), false, true},
		{"at now", now, false, false},
		{"within now's microsecond", now.Add(500 * time.Nanosecond), false, false},
		{"a microsecond after", now.Add(time.Microsecond), true, false},
		{"in another zone, an hour after", now.Add(time.Hour).In(time.FixedZone("", 5*3600)), true, false},
		{"in another zone, an hour before", now.Add(-time.Hour).In(time.FixedZone("", -5*3600)), false, true},
	}
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		for i, tc := range cases {
			addr := fmt.Sprintf("b%d@example.com", i)
			require.NoError(t, s.CreateVerificationToken(ctx, addr, "redeem", tc.expires), tc.name)
			_, _, err := s.RedeemVerificationToken(ctx, addr, "redeem", now)
			if tc.redeemable {
				require.NoError(t, err, tc.name)
			} else {
				require.True(t, errors.Is(err, ErrNotFound), "%s: err %v, want ErrNotFound", tc.name, err)
			}
			require.NoError(t, s.DeleteVerificationToken(ctx, addr, "redeem"))

			require.NoError(t, s.CreateVerificationToken(ctx, addr, "purge", tc.expires), tc.name)
			_, err = s.PurgeExpired(ctx, now)
			require.NoError(t, err)
			_, err = s.VerificationTokenByHash(ctx, "purge")
			require.Equal(t, tc.purged, errors.Is(err, ErrNotFound), "%s purged (err %v)", tc.name, err)
			require.NoError(t, s.DeleteVerificationToken(ctx, addr, "purge"))
		}
	})
}

// TestPostgresSessionTimeZone: a connection whose TimeZone is not UTC (a
// server or role default) reads and compares the same instants:
// timestamptz holds instants, not wall-clock times.
func TestPostgresSessionTimeZone(t *testing.T) {
	c := freshConfig(t, DialectPostgres)
	plain := connect(t, c)
	zoned := c
	zoned.DSN += "&timezone=Pacific/Chatham" // +12:45 / +13:45
	z := connect(t, zoned)
	var tz string
	require.NoError(t, z.db.Raw("SHOW TimeZone").Scan(&tz).Error)
	require.Equal(t, "Pacific/Chatham", tz)

	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, z.CreateVerificationToken(ctx, "z@example.com", "z", now.Add(time.Second)))
	tok, err := plain.VerificationTokenByHash(ctx, "z")
	require.NoError(t, err)
	require.True(t, now.Add(time.Second).Equal(tok.Expires), "written in Chatham, read elsewhere: %v", tok.Expires)
	_, _, err = z.RedeemVerificationToken(ctx, "z@example.com", "z", now.Add(time.Second))
	require.ErrorIs(t, err, ErrNotFound, "expired at the same instant in every zone")
	u, _, err := z.RedeemVerificationToken(ctx, "z@example.com", "z", now)
	require.NoError(t, err)
	got, err := plain.UserByID(ctx, u.ID)
	require.NoError(t, err)
	require.True(t, now.Equal(*got.EmailVerified), "emailVerified %v", got.EmailVerified)
}
