// Package client lets a Go backend know who is signed in to latchkey.
//
// A [Middleware] resolves the caller's session with a [Resolver] and puts the
// user in the request's context, where [UserFrom] reads it. Two resolvers
// exist:
//
//   - [Remote] asks latchkey's GET /session, forwarding only the session
//     cookie(s), with a short bounded cache and concurrent identical lookups
//     collapsed into one. It works with both session strategies and sees a
//     sign-out within the cache's time to live.
//   - [Local] decrypts the session cookie itself with the shared secret
//     (session.strategy: jwt only), in either token format (next-auth v4 or
//     Auth.js v5). No network, but a JWT session lives until it expires:
//     signing out clears the browser's cookie, it revokes nothing.
//
// Remote fails closed: when latchkey cannot be asked (or answers late), nobody
// is signed in and [Middleware.RequireUser] answers 503 (or 401, see
// [Options]), never the page.
//
// The Echo adapter is in the echoauth subpackage, so that net/http users do
// not import Echo.
package client

import (
	"context"
	"net/http"
	"time"
)

// User is the signed-in user as latchkey reports it. Fields latchkey did not
// send are empty: ID needs callbacks.expose_user_id in remote mode (the
// token's "sub" in local mode), and Name and Image depend on the provider.
type User struct {
	ID      string
	Email   string
	Name    string
	Image   string
	Expires time.Time // when the session ends unless it is extended
}

// Resolver finds the signed-in user of a request.
type Resolver interface {
	// User returns the request's user, nil when nobody is signed in (no
	// cookie, a forged or expired one, a session ended on latchkey). An
	// error means it could not tell (latchkey unreachable): the caller must
	// treat the request as signed out.
	User(r *http.Request) (*User, error)
}

// ctxKey is the context key of a resolution; unexported so only this
// package can set it.
type ctxKey struct{}

// resolution is what the middleware found for one request.
type resolution struct {
	user *User // nil: signed out, or err
	err  error // the resolver could not tell
}

func withResolution(r *http.Request, res resolution) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), ctxKey{}, &res))
}

func resolutionFrom(ctx context.Context) (*resolution, bool) {
	res, ok := ctx.Value(ctxKey{}).(*resolution)
	return res, ok
}

// UserFrom returns the user the middleware put in ctx; ok is false when
// nobody is signed in, latchkey could not be asked, or no middleware ran.
// The User is a copy: changing it changes nothing for other requests.
func UserFrom(ctx context.Context) (u User, ok bool) {
	res, found := resolutionFrom(ctx)
	if !found || res.user == nil {
		return User{}, false
	}
	return *res.user, true
}
