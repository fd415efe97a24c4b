// Package forwardauth answers reverse proxies (nginx auth_request, Traefik
// forwardAuth, Caddy forward_auth) asking, before every request they pass
// on to an app, whether the browser is signed in and may reach that host.
package forwardauth

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/access"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/proxies"
	"github.com/latchkey-auth/latchkey/app/redirect"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/app/web"
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
//	     identityHeader), Remote-Email too when the address is verified,
//	     Remote-Amr how the session signed in (amr values, comma-separated:
//	     pwd,otp,mfa), when known, and Remote-Groups the user's groups
//	     (comma-separated, sorted, as Authelia sends them), when it has any
//	401  not signed in (forward-auth: when no sign-in URL can be built)
//	302  forward-auth only, not signed in: {base}/signin?callbackUrl=<the
//	     original URL> (see signInRedirect)
//	403  signed in, but the access rules do not admit the user to the host
//	401/302  signed in with one factor where the host's rule requires two
//	     (two_factor: true): auth-request 401 (nginx's error_page sends the
//	     browser to sign in again, which asks for the code); forward-auth a
//	     302 to {base}/two-factor?callbackUrl=<the URL>, the step-up
//	503  the session store (or the groups' lookup) failed: neither a yes
//	     nor a sign-in

// Sessions is the read half of GET /session: the request's session as
// the strategy reads it, through the JWT hook, writing nothing (nil: none);
// a database session read from the database comes with the user's stored
// groups.
type Sessions interface {
	SignedInWithGroups(ctx context.Context, r *http.Request) (*session.Session, session.StoredGroups, error)
}

// Groups answers a user's groups (app/groups.Service): the ones an admin
// added and, for a verified address (nil: none, or unverified), those the
// config's rules give its domain; sorted, unique. It is asked on every
// request, so it should answer from memory most of the time.
type Groups interface {
	Of(ctx context.Context, userID string, verifiedEmail *string) ([]string, error)
	// OfRead is Of for the stored groups the session came with.
	OfRead(userID string, verifiedEmail *string, stored []string) []string
}

// Langs names the offered language a lang parameter asks for
// (*i18n.Catalog).
type Langs interface {
	Param(s string) (*i18n.Lang, bool)
}

// Handler owns GET (any method) /authz/auth-request and /authz/forward-auth.
type Handler struct {
	sessions  Sessions
	groups    Groups
	access    access.Policy
	proxies   proxies.Trusted
	redirects redirect.Policy
	langs     Langs
	signInURL string // {base}/signin
	stepUpURL string // {base}/two-factor
	log       *slog.Logger
	// warnedGroups: the log has said once that a user's groups did not
	// fit in Remote-Groups.
	warnedGroups atomic.Bool
}

// New builds the handler: groups answers users' groups, rules are the
// compiled access rules, trusted the proxies whose forwarding headers are
// believed, redirects the policy a sign-in's callbackUrl must pass, langs
// the languages a lang parameter may name.
func New(sessions Sessions, groups Groups, rules access.Policy, trusted proxies.Trusted, redirects redirect.Policy, langs Langs, base config.Base, log *slog.Logger) *Handler {
	return &Handler{sessions: sessions, groups: groups, access: rules, proxies: trusted, redirects: redirects, langs: langs,
		signInURL: base.URL("/signin"), stepUpURL: base.URL("/two-factor"), log: log}
}

// Mount registers both routes at the root of the listener, outside the
// base path, for every method (nginx's auth_request may ask with the
// original request's).
func (h *Handler) Mount(m web.Mux) {
	m.RootAny("/authz/auth-request", h.authRequest)
	m.RootAny("/authz/forward-auth", h.forwardAuth)
}

// maxIdentityHeader bounds Remote-Email and Remote-Name: proxies keep an
// auth answer's headers in a small buffer (nginx: 4 KiB), and a longer
// value would turn every request of that user into a 502.
const maxIdentityHeader = 1024

// maxGroupsHeader bounds Remote-Groups, for the same reason: about 30
// names of the longest kind, far more of the usual.
const maxGroupsHeader = 2048

// groupsOf is the user's groups: from the stored ones the session was
// read with when it was, else asked for.
func (h *Handler) groupsOf(ctx context.Context, userID string, stored session.StoredGroups, email *string) ([]string, error) {
	if stored.Read {
		return h.groups.OfRead(userID, email, stored.Names), nil
	}
	return h.groups.Of(ctx, userID, email)
}

// authRequest is GET /authz/auth-request, for nginx's auth_request: 200 or 401.
func (h *Handler) authRequest(c echo.Context) error { return h.authorize(c, false) }

// forwardAuth is GET /authz/forward-auth, for Traefik and Caddy: as
// authRequest, but a browser that is not signed in is sent to sign in.
func (h *Handler) forwardAuth(c echo.Context) error { return h.authorize(c, true) }

func (h *Handler) authorize(c echo.Context, sendToSignIn bool) error {
	r := c.Request()
	ctx := r.Context()
	// No cache may keep an answer: Cache-Control alone says so to every
	// HTTP/1.1 cache. next-auth's Pragma and Expires (noStore) are for its
	// own routes; here they would be two more header names on an answer
	// proxies ask for before every request (see documentPolicy).
	c.Response().Header()["Cache-Control"] = web.NoStoreCacheControl
	s, stored, err := h.sessions.SignedInWithGroups(ctx, r)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("forward-auth: session lookup failed", "err", err)
		}
		web.SetRetryAfter(c)
		return c.NoContent(http.StatusServiceUnavailable)
	}
	if s == nil || !identityHeader(s.User.ID) {
		return h.toSignIn(c, sendToSignIn, h.signInURL)
	}
	// Only a verified address is an identity: anyone can type any address
	// at a provider that does not check it (issue 26 M2).
	var email *string
	if s.User.EmailVerified {
		email = s.User.Email
	}
	groups, err := h.groupsOf(ctx, s.User.ID, stored, email)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("forward-auth: groups lookup failed", "err", err)
		}
		web.SetRetryAfter(c)
		return c.NoContent(http.StatusServiceUnavailable)
	}
	var methods []string
	if !h.access.Empty() {
		host := h.forwardedOf(r).hostname
		if !h.access.Allows(host, email, groups) {
			return c.NoContent(http.StatusForbidden)
		}
		if h.access.RequiresTwoFactor(host) {
			if methods = s.Methods(); !twofactor.MultiFactor(methods) {
				return h.toSignIn(c, sendToSignIn, h.stepUpURL)
			}
		}
	}
	hdr := c.Response().Header()
	hdr["Remote-User"] = []string{s.User.ID}
	if methods == nil {
		methods = s.Methods()
	}
	if len(methods) > 0 {
		hdr["Remote-Amr"] = []string{strings.Join(methods, ",")}
	}
	if len(groups) > 0 {
		// Names are header-safe and comma-free (config.ValidGroupName); a
		// list too long for a proxy's buffer is left out, as a long name.
		if v := strings.Join(groups, ","); len(v) <= maxGroupsHeader {
			hdr["Remote-Groups"] = []string{v}
		} else if h.warnedGroups.CompareAndSwap(false, true) {
			h.log.Warn("forward-auth: a user's groups are too many for a header (over 2048 bytes); Remote-Groups is left out for such users", "user", s.User.ID, "groups", len(groups))
		}
	}
	if v := email; v != nil && identityHeader(*v) {
		hdr["Remote-Email"] = []string{*v}
	}
	if v := s.User.Name; v != nil && identityHeader(*v) {
		hdr["Remote-Name"] = []string{*v}
	} else if v != nil && *v != "" {
		h.log.Debug("forward-auth: the user's name is not header-safe; Remote-Name left out", "user", s.User.ID)
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
// toSignIn answers a browser that must sign in (again) first: 401, or for
// forward-auth a 302 to page (the sign-in page, or the step-up) with the
// original URL as its callbackUrl, and the forward-auth request's own lang
// parameter when it names an offered language (an operator may give each
// protected host's address one: Traefik's address, Caddy's uri). The
// original URL's query is the app's, and its lang is not read.
func (h *Handler) toSignIn(c echo.Context, sendToSignIn bool, page string) error {
	if sendToSignIn {
		if to, ok := h.signInRedirect(c.Request(), page); ok {
			if l, ok := h.langs.Param(c.QueryParam("lang")); ok {
				to += "&lang=" + l.Tag() // a catalogue tag: nothing to escape
			}
			return c.Redirect(http.StatusFound, to)
		}
	}
	return c.NoContent(http.StatusUnauthorized)
}

func (h *Handler) signInRedirect(r *http.Request, page string) (string, bool) {
	f := h.forwardedOf(r)
	if f.url == "" {
		return "", false
	}
	target, ok := h.redirects.Resolve(f.url)
	if !ok {
		h.log.Debug("forward-auth: the forwarded URL is not on an allowed origin (allowed_redirect_origins); answering 401", "host", f.hostname)
		return "", false
	}
	return page + "?callbackUrl=" + url.QueryEscape(target), true
}
