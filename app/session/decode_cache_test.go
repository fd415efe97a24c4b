package session_test

// The jwt strategy's decode cache (WithFixedClaims) changes nothing a
// browser can see: a token read before is still refused once it expires,
// once its sign-in is revoked and when it was never valid (a rotated one is
// still re-issued: TestJWTSecretRotation); the claims the cache shares are
// never edited.

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// fixedJWT is a jwt harness with the decode cache, and its revocations.
func fixedJWT(t *testing.T, format jwt.Format) (harness, *session.Revocations) {
	t.Helper()
	h := newJWTHarness(format)(t, 0)
	revoked := &session.Revocations{}
	h.strategy.(*session.JWT).WithRevocations(revoked).WithFixedClaims()
	return h, revoked
}

func TestDecodeCacheStillExpires(t *testing.T) {
	for _, format := range []jwt.Format{jwt.V4, jwt.V5} {
		t.Run(format.String(), func(t *testing.T) {
			h, _ := fixedJWT(t, format)
			b := browser{}
			create(t, h, b, h.newUser(t), nil)
			for range 3 { // read, and read again from the cache
				s, _ := read(t, h, b)
				require.NotNil(t, s)
			}
			j := h.strategy.(*session.JWT)
			require.Equal(t, 1, j.DecodeCacheLen())
			h.clock.Add(maxAge + 16*time.Second) // past exp and the clock tolerance
			s, sent := read(t, h, b)
			require.Nil(t, s, "an expired token is refused, decoded before or not")
			require.True(t, sent)
			require.Zero(t, j.DecodeCacheLen(), "the refused token is not kept")
			s, _ = read(t, h, b)
			require.Nil(t, s, "and refused again, by decryption")
		})
	}
}

func TestDecodeCacheStillRevoked(t *testing.T) {
	h, revoked := fixedJWT(t, jwt.V4)
	b := browser{}
	u := h.newUser(t)
	create(t, h, b, u, nil)
	s, _ := read(t, h, b)
	require.NotNil(t, s)
	revoked.Set([]models.SessionRevocation{{UserID: u.ID, NotBefore: h.clock.Now().Unix() + 1}}, nil)
	s, _ = read(t, h, b)
	require.Nil(t, s, "a revocation ends a token the cache holds")
}

// A token one character off a cached one is decrypted (and refused), never
// answered from the cache.
func TestDecodeCacheNeverServesAnotherToken(t *testing.T) {
	h, _ := fixedJWT(t, jwt.V4)
	b := browser{}
	create(t, h, b, h.newUser(t), nil)
	s, _ := read(t, h, b)
	require.NotNil(t, s)
	tok := []byte(b[cookieName])
	i := len(tok) - 30 // in the ciphertext
	// Another base64url character: flipping bits could make one a cookie
	// may not carry ('_' ^ 3 is a backslash), which no reader sees.
	tok[i] = 'A'
	if b[cookieName][i] == 'A' {
		tok[i] = 'B'
	}
	for range 2 {
		s, sent := read(t, h, browser{cookieName: string(tok)})
		require.Nil(t, s)
		require.True(t, sent)
	}
}

// Readers of one token share its cached claims while one of them re-issues
// it (here every read: a token without auth_time, which write stamps in):
// run with -race, an edit of the shared map is a reported race.
func TestDecodeCacheClaimsAreNeverEdited(t *testing.T) {
	h, _ := fixedJWT(t, jwt.V4)
	k, err := jwt.NewKey(secret, "", jwt.V4)
	require.NoError(t, err)
	tok, err := k.Encode(map[string]any{"sub": "u1", "name": "Jo"}, maxAge, h.clock.Now()) // no auth_time
	require.NoError(t, err)
	b := browser{cookieName: tok}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				s, _ := read(t, h, b)
				require.NotNil(t, s)
				_ = s.Claims["name"]
				require.NotEmpty(t, setCookies(refresh(t, h, browser{cookieName: tok}, s)), "re-issued to carry auth_time")
			}
		})
	}
	wg.Wait()
	s, _ := read(t, h, b)
	_, stamped := s.Claims["auth_time"]
	require.False(t, stamped, "the cached claims are the token's, unedited")
}
