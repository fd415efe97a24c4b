package app_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenIDTokenRequestFailingSpendsNothing: a token request that fails
// on the database (here the users table is away for a moment, as in a
// blip) answers 500 server_error and spends nothing: the client's retry
// with the same code, or the same refresh token, gets the tokens. The
// code was spent (the refresh token rotated) before the ID token was
// built from the user's row, so the retry was a reuse: invalid_grant,
// and the family it had just been issued revoked.
func TestOpenIDTokenRequestFailingSpendsNothing(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret, append(offline, "groups")...)
		res, a := r.authorize(c)
		code := r.codeFrom(res, a)
		db := e.app.Store().DB()
		blip := func() func() {
			require.NoError(t, db.Exec("ALTER TABLE users RENAME TO users_away").Error)
			return func() { require.NoError(t, db.Exec("ALTER TABLE users_away RENAME TO users").Error) }
		}

		back := blip()
		_, _, err := r.exchange(code, a)
		back()
		kind, status := oauthError(t, err)
		require.Equal(t, "server_error", kind)
		require.Equal(t, http.StatusInternalServerError, status)
		tok, _, err := r.exchange(code, a)
		require.NoError(t, err, "the retry of an exchange that failed")

		back = blip()
		_, err = r.refresh(tok.RefreshToken)
		back()
		kind, status = oauthError(t, err)
		require.Equal(t, "server_error", kind)
		require.Equal(t, http.StatusInternalServerError, status)
		_, err = r.refresh(tok.RefreshToken)
		require.NoError(t, err, "the retry of a refresh that failed")
		require.Equal(t, http.StatusOK, r.userinfo(tok.AccessToken).StatusCode, "the family lives")
	})
}
