package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// The forward-auth routes live at the root of the listener, outside the base path.
const (
	authRequestPath = "/authz/auth-request"
	forwardAuthPath = "/authz/forward-auth"
)

// authz asks one forward-auth route with c's cookies (nil: none) and extra
// headers as name, value pairs.
func (e *env) authz(c *http.Client, path string, headers ...string) resp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	require.NoError(e.t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1]) // a header named twice is sent twice
	}
	if c == nil {
		c = e.browser()
	}
	return e.do(noRedirects(c), req)
}

// requireAuthzAnswer: a forward-auth answer has status, no body and sets no
// cookie; no cache may keep it. It carries the security headers of every
// answer but no CSP (it has nothing to render) nor next-auth's Pragma and
// Expires: with all three Remote-* headers that is eight header names, the
// most Go's header map holds before it grows.
func requireAuthzAnswer(t *testing.T, res resp, status int) {
	t.Helper()
	require.Equal(t, status, res.StatusCode, "body: %s", res.body)
	require.Empty(t, res.body)
	require.Empty(t, res.Header.Values("Set-Cookie"), "forward-auth sets no cookie")
	require.Equal(t, "private, no-cache, no-store", res.Header.Get("Cache-Control"))
	for _, h := range []string{"Content-Security-Policy", "Pragma", "Expires"} {
		require.Empty(t, res.Header.Values(h), h)
	}
	require.Equal(t, "DENY", res.Header.Get("X-Frame-Options"))
	require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "no-referrer", res.Header.Get("Referrer-Policy"))
	require.NotEmpty(t, res.Header.Get("X-Request-Id"))
	if status != http.StatusOK {
		for _, h := range []string{"Remote-User", "Remote-Email", "Remote-Name", "Remote-Groups"} {
			require.Empty(t, res.Header.Values(h), h)
		}
	}
}

// A signed-in browser passes both routes with its identity in Remote-*
// headers, without any write; once it signs out it passes no more, and
// (database strategy) neither does a copy of its old cookie.
func TestForwardAuthSignedIn(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startMail(t, b.opts(envOpts{}))
			c := e.signInByEmail("alice@example.com")
			user := e.onlyUser()
			old, _ := e.jarCookie(c, "next-auth.session-token")
			before := e.counts()
			for _, path := range []string{authRequestPath, forwardAuthPath} {
				res := e.authz(c, path)
				requireAuthzAnswer(t, res, http.StatusOK)
				require.Equal(t, user.ID, res.Header.Get("Remote-User"))
				require.Equal(t, "alice@example.com", res.Header.Get("Remote-Email"))
				require.Empty(t, res.Header.Values("Remote-Name"), "an e-mail sign-in knows no name")
			}
			require.Equal(t, before, e.counts(), "nothing written")

			res := e.post(c, "/signout", url.Values{"csrfToken": {e.csrf(c)}})
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			requireAuthzAnswer(t, e.authz(c, authRequestPath), http.StatusUnauthorized)
			requireAuthzAnswer(t, e.authz(c, forwardAuthPath), http.StatusUnauthorized)
			if b.strategy == config.StrategyDatabase {
				replay := e.rawDo(http.MethodGet, e.srv.URL+authRequestPath, "next-auth.session-token="+old, nil)
				requireAuthzAnswer(t, replay, http.StatusUnauthorized)
			}
		})
	}
}

// A session past its expiry stops passing at once, in both strategies.
func TestForwardAuthExpired(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startMail(t, envOpts{strategy: strategy})
			c := e.signInByEmail("alice@example.com")
			requireAuthzAnswer(t, e.authz(c, authRequestPath), http.StatusOK)
			e.clock.Add(30*24*time.Hour + time.Minute)
			requireAuthzAnswer(t, e.authz(c, authRequestPath), http.StatusUnauthorized)
			requireAuthzAnswer(t, e.authz(c, forwardAuthPath), http.StatusUnauthorized)
		})
	}
}

// No cookie, junk cookies, a forged token: 401, and nothing set (not even
// the CSRF cookie every other route issues, nor a clearing of the junk).
func TestForwardAuthNotSignedIn(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startEnv(t, envOpts{strategy: strategy})
			for _, cookie := range []string{"", "next-auth.session-token=junk", "next-auth.session-token=" + strings.Repeat("a", 5000),
				"next-auth.session-token.0=x; next-auth.session-token.1=y", "Remote-User=admin"} {
				for _, path := range []string{authRequestPath, forwardAuthPath} {
					res := e.rawDo(http.MethodGet, e.srv.URL+path, cookie, nil, "Remote-User", "admin", "Remote-Email", "admin@example.com")
					requireAuthzAnswer(t, res, http.StatusUnauthorized)
					require.Empty(t, res.location())
				}
			}
			// Any method: nginx may ask with the original request's.
			for _, m := range []string{http.MethodHead, http.MethodPost, http.MethodOptions} {
				res := e.rawDo(m, e.srv.URL+authRequestPath, "", nil)
				requireAuthzAnswer(t, res, http.StatusUnauthorized)
			}
			// The base path's routes are unchanged: /authz is not below it.
			require.Equal(t, http.StatusBadRequest, e.get(e.browser(), "/authz/auth-request").StatusCode)
		})
	}
}

// Identity headers are left out, never altered, when their value is not
// header-safe: a name with CR/LF or other control characters (set by a user
// at an IdP) cannot add headers of its own; UTF-8 passes unchanged.
func TestForwardAuthHeaderSafe(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startEnv(t, envOpts{strategy: strategy})
			for _, tc := range []struct{ name, email, wantName, wantEmail string }{
				{"José Ñandú 😀", "jose@example.com", "José Ñandú 😀", "jose@example.com"},
				{"Eve\r\nX-Injected: yes", "eve@example.com", "", "eve@example.com"},
				{"Eve\nX-Injected: yes", "eve\r\nX-Injected: yes@example.com", "", ""},
				{"tab\there", "bell\a@example.com", "", ""},
				{"del\x7f", "", "", ""},
				{strings.Repeat("n", 1025), "long@example.com", "", "long@example.com"},
				{strings.Repeat("n", 1024), "max@example.com", strings.Repeat("n", 1024), "max@example.com"},
			} {
				var cookie string
				var id string
				if strategy == config.StrategyJWT {
					id = "user-jwt"
					claims := map[string]any{"sub": id, "name": tc.name, "auth_time": time.Now().Unix()}
					if tc.email != "" {
						claims["email"], claims[session.VerifiedEmailClaim] = tc.email, tc.email
					}
					cookie = jwtCookie(t, claims, time.Now())
				} else {
					u := e.addVerifiedUser(tc.name, tc.email)
					id = u.ID
					cookie = e.addDBSession(u, time.Now().Add(time.Hour))
				}
				res := e.rawDo(http.MethodGet, e.srv.URL+authRequestPath, "next-auth.session-token="+cookie, nil)
				requireAuthzAnswer(t, res, http.StatusOK)
				require.Equal(t, id, res.Header.Get("Remote-User"))
				require.Equal(t, tc.wantName, res.Header.Get("Remote-Name"), "name %q", tc.name)
				require.Equal(t, tc.wantEmail, res.Header.Get("Remote-Email"), "email %q", tc.email)
				require.Empty(t, res.Header.Values("X-Injected"))
			}
		})
	}
}

// addVerifiedUser is addUser with the address verified: forward-auth
// sends Remote-Email for a verified address only.
func (e *env) addVerifiedUser(name, email string) *models.User {
	e.t.Helper()
	u := &models.User{ID: models.NewID()}
	if name != "" {
		u.Name = &name
	}
	if email != "" {
		now := time.Now()
		u.Email, u.EmailVerified = &email, &now
	}
	require.NoError(e.t, e.app.Store().CreateUser(context.Background(), u))
	return u
}

// forwardedEnv is an app behind a proxy on loopback (trusted, or not), with
// app.example.com allowed as a redirect origin.
func forwardedEnv(t *testing.T, strategy, trusted string, mutate func(*config.Config)) *env {
	return startEnv(t, envOpts{ownURL: true, strategy: strategy, config: func(c *config.Config) {
		c.TrustedProxies = []string{trusted}
		c.AllowedRedirectOrigins = []string{"https://app.example.com"}
		if mutate != nil {
			mutate(c)
		}
	}})
}

// Forward-auth sends a browser that is not signed in to the sign-in page
// with the URL it asked for as callbackUrl, rebuilt from a trusted proxy's
// headers and only for an origin the redirect policy allows; everything
// else gets 401.
func TestForwardAuthRedirect(t *testing.T) {
	e := forwardedEnv(t, config.StrategyDatabase, "127.0.0.1/32", nil)
	signIn := func(target string) string { return e.base + "/signin?callbackUrl=" + url.QueryEscape(target) }
	fwd := func(proto, host, uri string) []string {
		return []string{"X-Forwarded-Proto", proto, "X-Forwarded-Host", host, "X-Forwarded-Uri", uri}
	}
	for _, tc := range []struct {
		headers []string
		want    string // Location; "": 401
	}{
		{fwd("https", "app.example.com", "/page?x=1&y=a%20b"), signIn("https://app.example.com/page?x=1&y=a%20b")},
		{fwd("HTTPS", "APP.example.com", "/"), signIn("https://APP.example.com/")},
		{fwd("https", "app.example.com", ""), signIn("https://app.example.com/")},
		{fwd("https", "app.example.com:443", "/p"), signIn("https://app.example.com:443/p")}, // the default port: the same origin
		{[]string{"X-Original-URL", "https://app.example.com:443/p"}, signIn("https://app.example.com:443/p")},
		{[]string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "app.example.com"}, signIn("https://app.example.com/")},
		{fwd("http", strings.TrimPrefix(e.origin, "http://"), "/dash"), signIn(e.origin + "/dash")},
		{[]string{"X-Original-URL", "https://app.example.com/a?b=c"}, signIn("https://app.example.com/a?b=c")},
		{[]string{"X-Original-URL", "https://app.example.com/a", "X-Forwarded-Host", "app.example.com"}, signIn("https://app.example.com/a")},
		{append(fwd("https", strings.TrimPrefix(e.origin, "http://"), "/"), "X-Original-URL", "https://app.example.com/"), ""}, // disagree
		// Foreign or malformed: never a callbackUrl for them.
		{fwd("https", "evil.example.net", "/"), ""},
		{fwd("http", "app.example.com", "/"), ""}, // another origin than the allowed https one
		{fwd("https", "app.example.com:8443", "/"), ""},
		{fwd("https", "app.example.com, evil.example.net", "/"), ""},
		{fwd("https", "evil.example.net@app.example.com", "/"), ""},
		{fwd("https", "app.example.com/", "/x"), ""},
		{fwd("javascript", "app.example.com", "/"), ""},
		{fwd("", "app.example.com", "/"), ""},
		{fwd("https", "app.example.com", "x"), ""},
		{fwd("https", "app.example.com", "/"+strings.Repeat("a", 3000)), ""},
		{fwd("https", strings.Repeat("a", 3000)+".example.com", "/"), ""},
		{[]string{"X-Original-URL", "https://evil.example.net/"}, ""},
		{[]string{"X-Original-URL", "https://user@app.example.com/"}, ""},
		{[]string{"X-Original-URL", "//app.example.com/"}, ""},
		{[]string{"X-Original-URL", "javascript:alert(1)"}, ""},
		{[]string{"X-Original-URL", "https://app.example.com/" + strings.Repeat("a", 3000)}, ""},
		// Sent twice (a proxy that appends its line after the client's): absent.
		{[]string{"X-Original-URL", "https://app.example.com/client", "X-Original-URL", "https://app.example.com/proxy"}, ""},
		{append(fwd("https", "app.example.com", "/"), "X-Forwarded-Host", "app.example.com"), ""},
		{nil, ""},
	} {
		res := e.authz(nil, forwardAuthPath, tc.headers...)
		if tc.want == "" {
			requireAuthzAnswer(t, res, http.StatusUnauthorized)
			require.Empty(t, res.location(), "%q", tc.headers)
			continue
		}
		require.Equal(t, http.StatusFound, res.StatusCode, "%q", tc.headers)
		require.Equal(t, tc.want, res.location(), "%q", tc.headers)
		require.Empty(t, res.Header.Values("Set-Cookie"))
		// auth_request never redirects.
		requireAuthzAnswer(t, e.authz(nil, authRequestPath, tc.headers...), http.StatusUnauthorized)
	}

	// A lang on the forward-auth address (the proxy's configuration, say
	// Traefik's address: .../authz/forward-auth?lang=fr) is the sign-in
	// page's language; one not offered is none. The forwarded URL's own
	// query is the app's: its lang is not latchkey's to read.
	app := fwd("https", "app.example.com", "/page?lang=de")
	for q, want := range map[string]string{"?lang=fr": "&lang=fr", "?lang=sw": "", "": ""} {
		res := e.authz(nil, forwardAuthPath+q, app...)
		require.Equal(t, signIn("https://app.example.com/page?lang=de")+want, res.location(), q)
	}

	// The sign-in page takes the callbackUrl as next-auth does.
	c := e.browser()
	res := e.get(c, signIn("https://app.example.com/page?x=1"))
	require.Equal(t, http.StatusOK, res.StatusCode)
	got, _ := e.jarCookie(c, "next-auth.callback-url")
	require.Equal(t, url.QueryEscape("https://app.example.com/page?x=1"), got)
}

// Forwarding headers from a peer outside trusted_proxies are ignored (and
// the log says so once): no redirect anywhere, whatever they name.
func TestForwardAuthUntrustedPeer(t *testing.T) {
	e := startEnv(t, envOpts{ownURL: true, logs: true, config: func(c *config.Config) {
		c.TrustedProxies = []string{"10.0.0.0/8"}
		c.AllowedRedirectOrigins = []string{"https://app.example.com"}
	}})
	for range 3 {
		for _, h := range [][]string{
			{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "app.example.com", "X-Forwarded-Uri", "/", "X-Forwarded-For", "10.1.2.3"},
			{"X-Original-URL", "https://app.example.com/"},
		} {
			requireAuthzAnswer(t, e.authz(nil, forwardAuthPath, h...), http.StatusUnauthorized)
		}
	}
	require.Equal(t, 1, strings.Count(e.logs.String(), "outside trusted_proxies"), e.logs.String())
}

// Access rules answer 403 to a signed-in user they do not admit to the
// forwarded host; a host no rule names admits nobody (a client can make a
// catch-all server block forward any name: issue 26 M1), one named with
// anyone: true every signed-in user; a host that cannot be told (no
// header, or an untrusted peer's) admits nobody.
func TestForwardAuthAccessRules(t *testing.T) {
	rules := func(c *config.Config) {
		c.Access = []config.AccessRule{
			{Hosts: []string{"app.example.com"}, Emails: []string{"alice@example.com"}},
			{Hosts: []string{"*.corp.example.com"}, Domains: []string{"example.com"}},
			{Hosts: []string{"open.example.com"}, Anyone: true},
		}
	}
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := forwardedEnv(t, strategy, "127.0.0.1/32", rules)
			// cookie signs in address, verified or not (issue 26 M2: only
			// a verified address is an identity): a user row with or
			// without emailVerified, or a token with or without the claim.
			cookie := func(address string, verified bool) string {
				if strategy == config.StrategyJWT {
					claims := map[string]any{"sub": address, "email": address, "auth_time": time.Now().Unix()}
					if verified {
						claims[session.VerifiedEmailClaim] = address
					}
					return "next-auth.session-token=" + jwtCookie(t, claims, time.Now())
				}
				u := &models.User{ID: models.NewID(), Email: &address}
				if verified {
					now := time.Now()
					u.EmailVerified = &now
				}
				require.NoError(t, e.app.Store().CreateUser(context.Background(), u))
				return "next-auth.session-token=" + e.addDBSession(u, time.Now().Add(time.Hour))
			}
			alice, bob := cookie("alice@example.com", true), cookie("bob@example.org", true)
			carol, mallory := cookie("carol@example.com", true), cookie("mallory@example.com", false)
			for _, tc := range []struct {
				cookie  string
				headers []string
				want    int
			}{
				{alice, []string{"X-Forwarded-Host", "app.example.com"}, http.StatusOK},
				{alice, []string{"X-Original-URL", "https://APP.Example.com:8443/x"}, http.StatusOK},
				{bob, []string{"X-Forwarded-Host", "app.example.com"}, http.StatusForbidden},
				{bob, []string{"X-Forwarded-Host", "App.Example.Com:8443"}, http.StatusForbidden},
				{bob, []string{"X-Original-URL", "https://app.example.com/"}, http.StatusForbidden},
				{bob, []string{"X-Forwarded-Host", "other.example.com"}, http.StatusForbidden},
				{bob, []string{"X-Original-URL", "https://203.0.113.5/admin"}, http.StatusForbidden},
				{bob, []string{"X-Forwarded-Host", "corp.example.com"}, http.StatusForbidden},
				{bob, []string{"X-Forwarded-Host", "open.example.com"}, http.StatusOK},
				{alice, []string{"X-Forwarded-Host", "x.corp.example.com"}, http.StatusOK},
				{carol, []string{"X-Forwarded-Host", "x.corp.example.com"}, http.StatusOK},
				{bob, []string{"X-Forwarded-Host", "x.corp.example.com"}, http.StatusForbidden},
				// An address nobody verified passes no e-mail rule, only anyone: true.
				{mallory, []string{"X-Forwarded-Host", "x.corp.example.com"}, http.StatusForbidden},
				{mallory, []string{"X-Forwarded-Host", "open.example.com"}, http.StatusOK},
				{bob, nil, http.StatusForbidden},
				{bob, []string{"X-Forwarded-Host", "other.example.com, app.example.com"}, http.StatusForbidden},
				// The proxy sets one, the client adds the other: they disagree, so the host is unknown.
				{bob, []string{"X-Original-URL", "https://app.example.com/", "X-Forwarded-Host", "other.example.com"}, http.StatusForbidden},
				{bob, []string{"X-Forwarded-Host", "app.example.com", "X-Original-URL", "https://other.example.com/"}, http.StatusForbidden},
				{alice, []string{"X-Forwarded-Host", "app.example.com:443", "X-Original-URL", "https://app.example.com/"}, http.StatusOK},
				{"", []string{"X-Forwarded-Host", "app.example.com"}, http.StatusUnauthorized},
			} {
				for _, path := range []string{authRequestPath, forwardAuthPath} {
					res := e.rawDo(http.MethodGet, e.srv.URL+path, tc.cookie, nil, tc.headers...)
					requireAuthzAnswer(t, res, tc.want)
				}
			}
			// Remote-Email names a verified address only.
			res := e.rawDo(http.MethodGet, e.srv.URL+authRequestPath, carol, nil, "X-Forwarded-Host", "open.example.com")
			require.Equal(t, "carol@example.com", res.Header.Get("Remote-Email"))
			res = e.rawDo(http.MethodGet, e.srv.URL+authRequestPath, mallory, nil, "X-Forwarded-Host", "open.example.com")
			requireAuthzAnswer(t, res, http.StatusOK)
			require.NotEmpty(t, res.Header.Get("Remote-User"))
			require.Empty(t, res.Header.Values("Remote-Email"), "an unverified address is not sent")
			if strategy == config.StrategyJWT {
				// A token whose claim names another address than its e-mail
				// (re-encoded elsewhere with a new one) vouches for neither.
				moved := "next-auth.session-token=" + jwtCookie(t, map[string]any{"sub": "x", "email": "alice@example.com",
					session.VerifiedEmailClaim: "old@example.com", "auth_time": time.Now().Unix()}, time.Now())
				requireAuthzAnswer(t, e.rawDo(http.MethodGet, e.srv.URL+authRequestPath, moved, nil, "X-Forwarded-Host", "app.example.com"), http.StatusForbidden)
			}

			// Behind an untrusted peer the forged host is ignored: bob is not let in.
			u := forwardedEnv(t, strategy, "10.0.0.0/8", rules)
			var bobThere string
			if strategy == config.StrategyJWT {
				bobThere = bob
			} else {
				bobThere = "next-auth.session-token=" + u.addDBSession(u.addUser("", "bob@example.org", ""), time.Now().Add(time.Hour))
			}
			res = u.rawDo(http.MethodGet, u.srv.URL+authRequestPath, bobThere, nil, "X-Forwarded-Host", "other.example.com")
			requireAuthzAnswer(t, res, http.StatusForbidden)
		})
	}
}

// cookies.domain puts the session cookie, and only it, on the shared
// domain: set, refreshed and cleared with Domain=; the CSRF and callback
// cookies stay host-only.
func TestCookieDomainOnSessionCookieOnly(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) {
		c.ServiceURL = "http://auth.example.com/api/auth"
		c.Cookies.Domain = ".example.com"
	}})
	tok, res, sess := e.aliceSessionRead()
	require.Equal(t, "example.com", sess.Domain, sess.raw)
	csrfCookie, ok := findCookie(res.Header, "next-auth.csrf-token")
	require.True(t, ok)
	require.NotContains(t, csrfCookie.raw, "Domain")
	cb, ok := findCookie(res.Header, "next-auth.callback-url")
	require.True(t, ok)
	require.NotContains(t, cb.raw, "Domain")

	out := e.rawSignOut(tok)
	cleared, ok := findCookie(out.Header, "next-auth.session-token")
	require.True(t, ok)
	require.Contains(t, cleared.raw, "Max-Age=0")
	require.Equal(t, "example.com", cleared.Domain, "a domain cookie is only cleared by a line with the same Domain")
	requireAuthzAnswer(t, e.rawDo(http.MethodGet, e.srv.URL+authRequestPath, "next-auth.session-token="+tok, nil), http.StatusUnauthorized)
}

// aliceSessionRead makes a database session for alice@example.com and
// reads it by GET /session with no jar: her token, the answer and the
// session cookie it set.
func (e *env) aliceSessionRead() (string, resp, setCookie) {
	e.t.Helper()
	tok := e.addDBSession(e.addUser("", "alice@example.com", ""), time.Now().Add(time.Hour))
	res := e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+tok, nil)
	require.Equal(e.t, "alice@example.com", userEmail(res.json(e.t)))
	sess, ok := findCookie(res.Header, "next-auth.session-token")
	require.True(e.t, ok)
	return tok, res, sess
}

// rawSignOut is POST /signout for the database session tok, with a CSRF
// cookie of its own and no jar (the service URL's host is not the test
// server's, so a jar would keep no Domain cookie); it must redirect.
func (e *env) rawSignOut(tok string) resp { return e.rawSignOutTo(tok, "") }

// rawSignOutTo is rawSignOut with a callbackUrl ("": none).
func (e *env) rawSignOutTo(tok, callbackURL string) resp {
	e.t.Helper()
	res := e.rawDo(http.MethodGet, "/csrf", "", nil)
	csrfCookie, ok := findCookie(res.Header, "next-auth.csrf-token")
	require.True(e.t, ok)
	form := url.Values{"csrfToken": {res.json(e.t)["csrfToken"].(string)}}
	if callbackURL != "" {
		form.Set("callbackUrl", callbackURL)
	}
	out := e.rawDo(http.MethodPost, "/signout", csrfCookie.Name+"="+rawValue(csrfCookie.raw)+"; next-auth.session-token="+tok,
		strings.NewReader(form.Encode()), "Content-Type", "application/x-www-form-urlencoded")
	require.Equal(e.t, http.StatusFound, out.StatusCode, out.body)
	return out
}

// A browser that signed in before cookies.domain was set holds a host-only
// session cookie; signing out clears it along with the domain one, so it
// cannot shadow the next session.
func TestCookieDomainSignOutClearsHostOnlyCookie(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) {
		c.ServiceURL = "http://auth.example.com/api/auth"
		c.Cookies.Domain = "example.com"
	}})
	tok := e.addDBSession(e.addUser("", "alice@example.com", ""), time.Now().Add(time.Hour))
	out := e.rawSignOut(tok)
	var domains []string
	for _, c := range setCookies(out.Header) {
		if c.Name == "next-auth.session-token" {
			require.Contains(t, c.raw, "Max-Age=0")
			domains = append(domains, c.Domain)
		}
	}
	require.Equal(t, []string{"example.com", ""}, domains, "the domain cookie and a host-only one are both cleared")
}
