package app

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
)

// Forward-auth: reverse proxies (nginx auth_request, Traefik forwardAuth,
// Caddy forward_auth) ask latchkey, before every request they pass on to an
// app, whether the browser's cookies name a valid session. The answers have
// no body and set no cookie: a proxy drops the answer's Set-Cookie (nginx)
// or hands on only the headers it is told to copy, so a session is never
// extended here; it lives max_age from its sign-in or from its last refresh
// by GET /session. Both routes live at the root of the listener, outside
// the base path, and take any method (proxies send GET).
//
//	200  signed in (and allowed by the access rules); Remote-User is the
//	     user id, Remote-Name is set when known and header-safe (see
//	     identityHeader), Remote-Email too when the address is verified
//	401  not signed in (forward-auth: when no sign-in URL can be built)
//	302  forward-auth only, not signed in: {base}/signin?callbackUrl=<the
//	     original URL> (see signInRedirect)
//	403  signed in, but the access rules do not admit the user to the host
//	503  the session store failed: neither a yes nor a sign-in

// maxIdentityHeader bounds Remote-Email and Remote-Name: proxies keep an
// auth answer's headers in a small buffer (nginx: 4 KiB), and a longer
// value would turn every request of that user into a 502.
const maxIdentityHeader = 1024

// authRequest is GET /authz/auth-request, for nginx's auth_request: 200 or 401.
func (a *App) authRequest(c echo.Context) error { return a.authorize(c, false) }

// forwardAuth is GET /authz/forward-auth, for Traefik and Caddy: as
// authRequest, but a browser that is not signed in is sent to sign in.
func (a *App) forwardAuth(c echo.Context) error { return a.authorize(c, true) }

func (a *App) authorize(c echo.Context, sendToSignIn bool) error {
	r := c.Request()
	ctx := r.Context()
	// No cache may keep an answer: Cache-Control alone says so to every
	// HTTP/1.1 cache. next-auth's Pragma and Expires (noStore) are for its
	// own routes; here they would be two more header names on an answer
	// proxies ask for before every request (see documentPolicy).
	c.Response().Header()["Cache-Control"] = noStoreCacheControl
	s, _, err := a.signedIn(ctx, r, signin.JWTInput{})
	if err != nil {
		if ctx.Err() == nil {
			a.log.Warn("forward-auth: session lookup failed", "err", err)
		}
		return c.NoContent(http.StatusServiceUnavailable)
	}
	if s == nil || !identityHeader(s.User.ID) {
		if sendToSignIn {
			if to, ok := a.signInRedirect(r); ok {
				return c.Redirect(http.StatusFound, to)
			}
		}
		return c.NoContent(http.StatusUnauthorized)
	}
	// Only a verified address is an identity: anyone can type any address
	// at a provider that does not check it (issue 26 M2).
	var email *string
	if s.User.EmailVerified {
		email = s.User.Email
	}
	if !a.authz.access.Empty() && !a.authz.access.Allows(a.forwardedOf(r).hostname, email) {
		return c.NoContent(http.StatusForbidden)
	}
	h := c.Response().Header()
	h["Remote-User"] = []string{s.User.ID}
	if v := email; v != nil && identityHeader(*v) {
		h["Remote-Email"] = []string{*v}
	}
	if v := s.User.Name; v != nil && identityHeader(*v) {
		h["Remote-Name"] = []string{*v}
	} else if v != nil && *v != "" {
		a.log.Debug("forward-auth: the user's name is not header-safe; Remote-Name left out", "user", s.User.ID)
	}
	return c.NoContent(http.StatusOK)
}

// identityHeader reports whether v may be sent as a header value as it is:
// not empty, at most maxIdentityHeader bytes, and free of control
// characters (CR and LF above all, which would let a name set by a user
// at an IdP add headers of its own). UTF-8 passes unchanged, as RFC 9110's
// obs-text; a value that fails is left out, never altered, so an app never
// sees a mangled e-mail address.
func identityHeader(v string) bool {
	if v == "" || len(v) > maxIdentityHeader {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// signInRedirect is where forward-auth sends a browser that is not signed
// in: the sign-in page, with the URL it asked for as callbackUrl. That URL
// is rebuilt from the forwarding headers of a trusted proxy only, and must
// pass the redirect policy as it is (the service's origin or one of
// allowed_redirect_origins): otherwise there is no redirect (ok false),
// never one back to a host latchkey does not know.
func (a *App) signInRedirect(r *http.Request) (string, bool) {
	f := a.forwardedOf(r)
	if f.url == "" {
		return "", false
	}
	target, ok := a.policy.Resolve(f.url)
	if !ok {
		a.log.Debug("forward-auth: the forwarded URL is not on an allowed origin (allowed_redirect_origins); answering 401", "host", f.hostname)
		return "", false
	}
	return a.base.URL("/signin") + "?callbackUrl=" + url.QueryEscape(target), true
}
