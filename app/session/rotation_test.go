package session_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/app/session"
)

// TestJWTSecretRotation: a token encrypted under an older secret is read
// while that secret is listed, and Refresh re-issues it under the first
// secret in the same response; once the old secret is dropped, only the
// re-issued token still works. With the decode cache (fixed claims) the
// same holds for a token read before: it is re-issued on every read until
// the browser holds the new one.
func TestJWTSecretRotation(t *testing.T) {
	const a, b = "secret-A-0123456789abcdef0123456789", "secret-B-0123456789abcdef0123456789"
	for _, format := range []jwt.Format{jwt.V4, jwt.V5} {
		for _, fixed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fixed_claims=%v", format, fixed), func(t *testing.T) {
				testSecretRotation(t, format, fixed, a, b)
			})
		}
	}
}

func testSecretRotation(t *testing.T, format jwt.Format, fixed bool, a, b string) {
	clk := &clock{t: time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC)}
	life := session.Lifetime{MaxAge: maxAge, UpdateAge: updateAge, Now: clk.Now}
	strategy := func(secrets ...string) harness {
		s, err := session.NewJWT(secrets, format, cookieName, cookies.Writer{}, life)
		require.NoError(t, err)
		if fixed {
			s.WithFixedClaims()
		}
		return harness{strategy: s, clock: clk}
	}
	underA, rotated, onlyB := strategy(a), strategy(b, a), strategy(b)
	u := session.User{ID: "user-1", Email: str("r@example.com")}
	original := browser{}
	create(t, underA, original, u, session.DefaultClaims(u))

	for range 2 { // read again: from the decode cache, with fixed claims
		s, _ := read(t, rotated, original)
		require.NotNil(t, s, "a token from before the rotation is accepted")
		require.Equal(t, "user-1", s.User.ID)
		refreshed := original.clone()
		refresh(t, rotated, refreshed, s)
		require.NotEqual(t, original[cookieName], refreshed[cookieName], "re-issued in the same response")
	}
	s, _ := read(t, rotated, original)
	refreshed := original.clone()
	refresh(t, rotated, refreshed, s)

	s, _ = read(t, onlyB, refreshed)
	require.NotNil(t, s, "the re-issued token is under B")
	s, sent := read(t, onlyB, original)
	require.Nil(t, s, "A retired: the original token no longer works")
	require.True(t, sent)
	s, _ = read(t, underA, refreshed)
	require.Nil(t, s, "the re-issued token is not under A")
}
