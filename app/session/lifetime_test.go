package session_test

// The absolute lifetime's edges: what the jwt strategy writes into the token
// (read back with the token key alone, as next-auth/jwt decode would), and
// sessions whose sign-in time is missing.

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

func v4Key(t *testing.T) *jwt.Key {
	t.Helper()
	k, err := jwt.NewKey(secret, "", jwt.V4)
	require.NoError(t, err)
	return k
}

// TestJWTCarriesSignInTime: auth_time is the sign-in, iat and exp are
// next-auth's (this encode, and now+max_age), and exp never passes
// sign-in + absolute_max_age.
func TestJWTCarriesSignInTime(t *testing.T) {
	const absolute = 40 * 24 * time.Hour
	h := newJWTHarness(jwt.V4)(t, absolute)
	b := browser{}
	start := h.clock.Now()
	create(t, h, b, h.newUser(t), nil)
	claims, err := v4Key(t).Decode(b[cookieName], h.clock.Now())
	require.NoError(t, err)
	require.EqualValues(t, start.Unix(), claims["auth_time"])
	require.EqualValues(t, start.Unix(), claims["iat"])
	require.EqualValues(t, start.Add(maxAge).Unix(), claims["exp"])
	require.NotContains(t, claims, session.AssumedSignInClaim)

	h.clock.Add(25*24*time.Hour + 1500*time.Millisecond)
	s, _ := read(t, h, b)
	require.NotNil(t, s)
	refresh(t, h, b, s)
	claims, err = v4Key(t).Decode(b[cookieName], h.clock.Now())
	require.NoError(t, err)
	require.EqualValues(t, start.Unix(), claims["auth_time"], "re-encoding keeps the sign-in time")
	require.EqualValues(t, h.clock.Now().Unix(), claims["iat"], "iat is the time of this encode, as next-auth's")
	require.EqualValues(t, start.Add(absolute).Unix(), claims["exp"], "exp capped at sign-in + absolute_max_age, so next-auth's getToken refuses it then too")
}

// TestJWTWithoutAuthTime: a token next-auth's encode minted (or latchkey
// before auth_time) counts from its iat and gets auth_time when re-encoded;
// a token claiming a sign-in in the future is refused.
func TestJWTWithoutAuthTime(t *testing.T) {
	const absolute = 40 * 24 * time.Hour
	h := newJWTHarness(jwt.V4)(t, absolute)
	k := v4Key(t)
	minted := h.clock.Now()
	tok, err := k.Encode(map[string]any{"sub": "u1", "email": "u1@example.com"}, maxAge, minted)
	require.NoError(t, err)
	b := browser{cookieName: tok}

	h.clock.Add(time.Hour)
	s, _ := read(t, h, b)
	require.NotNil(t, s)
	require.True(t, minted.Equal(s.SignedIn), "counts from iat: %v", s.SignedIn)
	require.True(t, s.Proven().IsZero(), "iat proves no recent sign-in")
	refresh(t, h, b, s)
	claims, err := k.Decode(b[cookieName], h.clock.Now())
	require.NoError(t, err)
	require.EqualValues(t, minted.Unix(), claims["auth_time"])
	require.Equal(t, true, claims[session.AssumedSignInClaim])
	s, _ = read(t, h, b)
	require.NotNil(t, s)
	require.True(t, s.Proven().IsZero(), "nor the auth_time taken from it")

	for name, authTime := range map[string]any{
		"future":     h.clock.Now().Add(time.Hour).Unix(),
		"not number": "yesterday",
		"negative":   -1,
	} {
		tok, err := k.Encode(map[string]any{"sub": "u1", "auth_time": authTime}, maxAge, h.clock.Now())
		require.NoError(t, err)
		s, sent := read(t, h, browser{cookieName: tok})
		require.Nil(t, s, name)
		require.True(t, sent, name)
	}
	// Within the decoders' 15 s clock tolerance a sign-in "from the future" is accepted.
	tok, err = k.Encode(map[string]any{"sub": "u1", "auth_time": h.clock.Now().Add(10 * time.Second).Unix()}, maxAge, h.clock.Now())
	require.NoError(t, err)
	s, _ = read(t, h, browser{cookieName: tok})
	require.NotNil(t, s)
}

// TestJWTCreateStampsNilClaims: a token latchkey writes always tells when
// its session began, even from empty claims.
func TestJWTCreateStampsNilClaims(t *testing.T) {
	clk := &clock{t: time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC)}
	j, err := session.NewJWT([]string{secret}, jwt.V4, cookieName, cookies.Writer{}, session.Lifetime{MaxAge: maxAge, AbsoluteMaxAge: maxAge, Now: clk.Now})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	require.NoError(t, j.Create(context.Background(), rec, browser{}.request(), session.User{ID: "u"}, nil))
	b := browser{}
	b.apply(rec.Header())
	claims, err := v4Key(t).Decode(b[cookieName], clk.Now())
	require.NoError(t, err)
	require.EqualValues(t, clk.Now().Unix(), claims["auth_time"])
}

// unknownSignIn returns a live row whose sign-in time is unknown (created_at
// NULL, as only a hand edit leaves it) and records deletions.
type unknownSignIn struct {
	session.Store
	deleted []string
}

func (u *unknownSignIn) ReadSession(_ context.Context, _ string, row *models.SessionRow) error {
	*row = models.SessionRow{UserID: "u", Expires: time.Now().Add(time.Hour)}
	return nil
}

func (u *unknownSignIn) DeleteSession(_ context.Context, hash string) error {
	u.deleted = append(u.deleted, hash)
	return nil
}

// TestDatabaseUnknownSignInFailsClosed: with an absolute limit, a row that
// cannot say when its session began is over (and deleted); without one it
// is an ordinary session.
func TestDatabaseUnknownSignInFailsClosed(t *testing.T) {
	b := browser{cookieName: models.NewID()}
	for _, absolute := range []time.Duration{maxAge, 0} {
		store := &unknownSignIn{}
		d := session.NewDatabase(store, cookieName, cookies.Writer{}, session.Lifetime{MaxAge: maxAge, UpdateAge: updateAge, AbsoluteMaxAge: absolute, Now: time.Now})
		s, sent, err := d.Read(context.Background(), b.request())
		require.NoError(t, err)
		require.True(t, sent)
		if absolute > 0 {
			require.Nil(t, s)
			require.Len(t, store.deleted, 1)
		} else {
			require.NotNil(t, s)
			require.Empty(t, store.deleted)
		}
	}
}
