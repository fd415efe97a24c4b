package app_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// TestOpenIDNextAuthTokenIsNoRecentSignIn: a session JWT next-auth minted
// (an app sharing the secret during a migration) has no auth_time, and
// next-auth renews its iat on every re-encode, so it is no proof of a
// recent sign-in (session.Session.Proven). A request with max_age, or
// one that sent the browser to sign in (prompt=login), does not accept it:
// the browser signs in through latchkey first, and the ID token's
// auth_time is that sign-in. A stolen old cookie the next-auth app kept
// refreshing passed a relying party's re-authentication. A request
// without max_age still completes on it.
func TestOpenIDNextAuthTokenIsNoRecentSignIn(t *testing.T) {
	e := startOP(t, backend{config.StrategyJWT, config.StrategyJWT, false}, nil)
	r := e.relyingParty("tool", rpSecret) // first-party: no consent page
	c := e.signedIn(ada)
	userID := e.userID(ada)
	nextAuthRefreshed := func(after time.Duration) {
		e.clock.Add(after)
		e.setJarCookie(c, "next-auth.session-token", jwtCookie(t, map[string]any{"sub": userID, "email": ada}, e.clock.Now()))
	}
	nextAuthRefreshed(10 * time.Minute)
	r.signInFlow(c) // no max_age: the session is good for it

	nextAuthRefreshed(10 * time.Minute)
	page, _ := r.authorize(c, "max_age", "3600")
	require.Equal(t, e.path+"/signin", page.Request.URL.Path, "max_age: %d %s", page.StatusCode, page.location())

	page, _ = r.authorize(c, "prompt", "login")
	require.Equal(t, e.path+"/signin", page.Request.URL.Path, "prompt=login: %d %s", page.StatusCode, page.location())
	back := page.Request.URL.Query().Get("callbackUrl")
	nextAuthRefreshed(time.Minute) // the next-auth app re-encodes the cookie after the request asked for a sign-in
	res := e.follow(c, back)
	require.Equal(t, e.path+"/signin", res.Request.URL.Path, "prompt=login after a re-encode: %d %s", res.StatusCode, res.location())
	id, err := url.Parse(back)
	require.NoError(t, err)
	require.False(t, e.authRequestDone(id.Query().Get("id")))

	// A sign-in through latchkey completes the request, with its time.
	e.clock.Add(time.Second)
	page, a := r.authorize(c, "max_age", "60")
	require.Equal(t, http.StatusOK, page.StatusCode)
	_, idTok, err := r.exchange(r.codeFrom(e.signInFrom(c, page, ada), a), a)
	require.NoError(t, err)
	require.Equal(t, e.clock.Now().Unix(), authTime(t, idTok))
}
