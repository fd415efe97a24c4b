package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// accountPosts are the account API's POST routes.
var accountPosts = []string{
	"/revoke-session", "/revoke-other-sessions", "/unlink-account", "/link-account", "/change-email", "/delete-user",
}

// accountOps are the document's operations of the account page.
var accountOps = []string{
	"GET /account", "GET /list-sessions", "GET /list-accounts", "POST /revoke-session", "POST /revoke-other-sessions",
	"POST /unlink-account", "POST /link-account", "POST /change-email", "POST /delete-user",
	"GET /account/email/confirm", "POST /account/email/confirm",
}

// account drives the account page and its JSON API on an instance of its
// own (an OIDC provider, e-mail with low limits, a settable clock; then
// one with account.self_delete off) through every answer the document
// lists for them. Its checker's findings join a.v's. TestOpenAPIMatchesRealResponses
// runs it in each session strategy and cookie style.
func (a apiDriver) account() {
	t := a.e.t
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	ae := startEnv(t, envOpts{
		smtp: &smtptest.Options{}, strategy: a.e.cfg.Session.Strategy, clock: clock,
		email: func(p *config.Provider) {
			p.RateLimit.PerAddress, p.RateLimit.PerIP, p.RateLimit.PerNetwork, p.RateLimit.Global = 3, 1000, 1000, 1000
		},
	}.oidc(func(c *config.Config) { c.Cookies.Style = a.e.cfg.Cookies.Style }, nil))
	d := a.checkedOn(ae)
	d.accountAnswers()

	off := startEnv(t, envOpts{smtp: &smtptest.Options{}, strategy: a.e.cfg.Session.Strategy, config: func(c *config.Config) {
		c.Cookies.Style = a.e.cfg.Cookies.Style
		c.Account.SelfDelete = false
	}, ownURL: true})
	o := a.checkedOn(off)
	c := o.browser()
	off.signInByLink(c, "kept@example.com")
	res := off.form(c, "/delete-user", "confirm", "kept@example.com", "json", "true")
	requireAccountError(t, res, http.StatusForbidden, "AccessDenied")
	require.NotContains(t, off.get(c, "/account").body, `/delete-user"`, "self_delete off: no delete form")
	require.Equal(t, "kept@example.com", userEmail(off.session(c)), "nothing changed")

	d.v.requireCovered(t, accountOps)
}

// hasUser reports whether a user has the address.
func (e *env) hasUser(addr string) bool {
	_, err := e.app.Store().UserByEmail(context.Background(), addr)
	return err == nil
}

// requireAccountError asserts a JSON refusal {"error": code} with status.
func requireAccountError(t testing.TB, res resp, status int, code string) {
	t.Helper()
	require.Equal(t, status, res.StatusCode, res.body)
	require.Equal(t, code, res.json(t)["error"], res.body)
}

// requireOK asserts a JSON {"ok": true}.
func requireOK(t testing.TB, res resp) map[string]any {
	t.Helper()
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	m := res.json(t)
	require.Equal(t, true, m["ok"], res.body)
	return m
}

type accountSession struct {
	ID         string    `json:"id"`
	Current    bool      `json:"current"`
	CreatedAt  time.Time `json:"createdAt"`
	LastSeenAt time.Time `json:"lastSeenAt"`
	Device     string    `json:"device"`
	Network    string    `json:"network"`
}

// listSessions is c's GET /list-sessions.
func (e *env) listSessions(c *http.Client) []accountSession {
	e.t.Helper()
	res := e.get(c, "/list-sessions")
	require.Equal(e.t, http.StatusOK, res.StatusCode, res.body)
	var out []accountSession
	require.NoError(e.t, json.Unmarshal([]byte(res.body), &out))
	return out
}

// currentSession is the id of c's own session.
func (e *env) currentSession(c *http.Client) string {
	e.t.Helper()
	for _, s := range e.listSessions(c) {
		if s.Current {
			return s.ID
		}
	}
	e.t.Fatal("no current session listed")
	return ""
}

func (a apiDriver) accountAnswers() {
	e, t := a.e, a.e.t
	stale := strings.Repeat("0", 64)
	huge := "csrfToken=" + strings.Repeat("a", 70<<10)
	jsonForm := func(c *http.Client, p string, fields ...string) resp {
		return e.form(c, p, append(fields, "json", "true")...)
	}

	// Signed out: the page to sign in, the API 401, malformed and huge bodies.
	out := a.browser()
	res := e.get(out, "/account")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "/signin?callbackUrl=")
	requireAccountError(t, e.get(out, "/list-sessions"), http.StatusUnauthorized, "SessionRequired")
	requireAccountError(t, e.get(out, "/list-accounts"), http.StatusUnauthorized, "SessionRequired")
	for _, p := range append(accountPosts, "/account/email/confirm") {
		e.csrf(out)
		res := e.do(out, a.request(http.MethodPost, p, "csrfToken=%zz", "application/x-www-form-urlencoded", invalidRequest))
		require.Equal(t, http.StatusBadRequest, res.StatusCode, p)
		res = e.do(out, a.request(http.MethodPost, p, huge, "application/x-www-form-urlencoded"))
		require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, p)
		if p == "/account/email/confirm" {
			continue
		}
		requireAccountError(t, jsonForm(out, p), http.StatusUnauthorized, "SessionRequired")
		res = e.form(out, p)
		require.Equal(t, http.StatusFound, res.StatusCode, p)
		require.Contains(t, res.location(), "/signin?callbackUrl=", p)
	}

	// Ada: an OIDC sign-in (verified address), then an e-mail sign-in of
	// the same address in two more browsers.
	e.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-ada", Email: "ada@example.com", EmailVerified: true, PreferredUsername: "ada"})
	f := a.following()
	require.Equal(t, e.origin+"/", e.signIn(f, "idp", e.origin+"/").location())
	ada, other := a.browser(), a.browser()
	e.signInByLink(ada, "ada@example.com")
	e.signInByLink(other, "ada@example.com")

	// The page, the lists.
	require.Equal(t, http.StatusOK, e.get(ada, "/account").StatusCode)
	require.Equal(t, http.StatusBadRequest, e.get(ada, "/account?error=SessionNotFound").StatusCode)
	sessions := e.listSessions(ada)
	require.Len(t, sessions, 3)
	res = e.get(ada, "/list-accounts")
	require.Equal(t, http.StatusOK, res.StatusCode)
	var linked []struct{ ID, Provider, Name, Label string }
	require.NoError(t, json.Unmarshal([]byte(res.body), &linked))
	require.Len(t, linked, 1)
	require.Equal(t, "idp", linked[0].Provider)

	// CSRF mismatch: back to the page, or 403 MissingCSRF in JSON; nothing ends.
	for _, p := range accountPosts {
		res := e.post(ada, p, url.Values{"csrfToken": {stale}})
		require.Equal(t, http.StatusFound, res.StatusCode, p)
		require.Contains(t, res.location(), "/account?csrf=true", p)
		requireAccountError(t, e.post(ada, p, url.Values{"csrfToken": {stale}, "json": {"true"}}), http.StatusForbidden, "MissingCSRF")
	}
	require.Len(t, e.listSessions(ada), 3)

	// Ending sessions: a foreign id (404, JSON and form), one by id (JSON
	// with Accept, form), the others.
	requireAccountError(t, jsonForm(ada, "/revoke-session", "id", "not-a-session"), http.StatusNotFound, "NotFound")
	res = e.form(ada, "/revoke-session", "id", "not-a-session")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "/account?error=SessionNotFound")
	fID := e.currentSession(noRedirects(f))
	res = e.post(ada, "/revoke-session", url.Values{"csrfToken": {e.csrf(ada)}, "id": {fID}}, "Accept", "application/json")
	requireOK(t, res)
	require.Empty(t, e.session(noRedirects(f)), "the ended session is signed out")
	require.Len(t, e.listSessions(ada), 2)
	res = e.form(ada, "/revoke-session", "id", fID)
	require.Equal(t, http.StatusFound, res.StatusCode, "already ended: refused")
	require.Contains(t, res.location(), "error=SessionNotFound")
	require.Equal(t, float64(1), requireOK(t, jsonForm(ada, "/revoke-other-sessions"))["revoked"])
	require.Empty(t, e.session(other))
	res = e.form(ada, "/revoke-other-sessions")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "/account?notice=OtherSessionsEnded")
	own := a.browser()
	e.signInByLink(own, "ada@example.com")
	res = e.form(own, "/revoke-session", "id", e.currentSession(own))
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "/account?notice=SessionEnded")
	require.Empty(t, e.session(own), "its own session: signed out")

	// Linking: another provider is unknown (404), the IdP starts (JSON {url}, form 302).
	requireAccountError(t, jsonForm(ada, "/link-account", "provider", "nope"), http.StatusNotFound, "NotFound")
	requireAccountError(t, jsonForm(ada, "/link-account", "provider", "email"), http.StatusNotFound, "NotFound")
	res = jsonForm(ada, "/link-account", "provider", "idp")
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	require.True(t, strings.HasPrefix(res.json(t)["url"].(string), e.idp.Issuer()))
	res = e.form(ada, "/link-account", "provider", "idp")
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.True(t, strings.HasPrefix(res.location(), e.idp.Issuer()), res.location())

	// Unlinking: a foreign id (404), the IdP (the address remains: 200),
	// the last way of an OAuth-only user (409, form and JSON).
	requireAccountError(t, jsonForm(ada, "/unlink-account", "id", "not-an-account"), http.StatusNotFound, "NotFound")
	requireOK(t, jsonForm(ada, "/unlink-account", "id", linked[0].ID))
	require.Equal(t, "[]", strings.TrimSpace(e.get(ada, "/list-accounts").body))
	e.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-oauth-only", PreferredUsername: "oo"})
	g := a.following()
	require.Equal(t, e.origin+"/", e.signIn(g, "idp", e.origin+"/").location())
	g = noRedirects(g)
	res = e.get(g, "/list-accounts")
	require.NoError(t, json.Unmarshal([]byte(res.body), &linked))
	require.Len(t, linked, 1)
	requireAccountError(t, jsonForm(g, "/unlink-account", "id", linked[0].ID), http.StatusConflict, "LastSignInMethod")
	res = e.form(g, "/unlink-account", "id", linked[0].ID)
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "error=LastSignInMethod")

	// E-mail change: bad and same addresses (400), a link (JSON and form),
	// its page, a dead link, a CSRF mismatch, applied, replayed, an address
	// taken meanwhile (409), the limits (429).
	requireAccountError(t, jsonForm(ada, "/change-email", "email", "not an address"), http.StatusBadRequest, "BadAddress")
	requireAccountError(t, jsonForm(ada, "/change-email", "email", "ADA@example.com"), http.StatusBadRequest, "BadAddress")
	n := e.mailCount()
	requireOK(t, jsonForm(ada, "/change-email", "email", "ada.new@example.com"))
	link, _ := e.flowLink(n+1, "/account/email/confirm")
	token := linkQuery(t, link).Get("token")
	require.Equal(t, http.StatusOK, e.get(ada, link).StatusCode)
	require.Equal(t, http.StatusGone, e.get(ada, "/account/email/confirm?token=nope").StatusCode)
	res = e.post(ada, "/account/email/confirm", url.Values{"csrfToken": {stale}, "token": {token}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	requireOK(t, jsonForm(ada, "/account/email/confirm", "token", token))
	require.True(t, e.hasUser("ada.new@example.com"))
	requireAccountError(t, jsonForm(ada, "/account/email/confirm", "token", token), http.StatusGone, "Verification")
	require.Equal(t, http.StatusGone, e.form(ada, "/account/email/confirm", "token", token).StatusCode)

	n = e.mailCount()
	res = e.form(ada, "/change-email", "email", "ada.third@example.com")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "/account?notice=EmailChangeSent")
	link, _ = e.flowLink(n+1, "/account/email/confirm")
	token = linkQuery(t, link).Get("token")
	e.signInByLink(a.browser(), "ada.third@example.com") // someone takes the address meanwhile
	requireAccountError(t, jsonForm(ada, "/account/email/confirm", "token", token), http.StatusConflict, "EmailTaken")
	require.Equal(t, http.StatusConflict, e.form(ada, "/account/email/confirm", "token", token).StatusCode)
	require.True(t, e.hasUser("ada.new@example.com"), "nothing changed")

	n = e.mailCount()
	requireOK(t, jsonForm(ada, "/change-email", "email", "ada.third@example.com")) // taken: the same answer
	_, p := e.mail(n + 1)
	require.NotContains(t, p.Text, "/account/email/confirm?token=", "the holder gets a notice, no link")
	n = e.mailCount()
	requireOK(t, jsonForm(ada, "/change-email", "email", "ada.fourth@example.com"))
	link, _ = e.flowLink(n+1, "/account/email/confirm")
	res = e.form(ada, "/account/email/confirm", "token", linkQuery(t, link).Get("token"))
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Contains(t, res.location(), "/account?notice=EmailChanged")

	limited := 0
	for range 6 {
		if res = jsonForm(ada, "/change-email", "email", "limited@example.com"); res.StatusCode != http.StatusOK {
			limited = res.StatusCode
			break
		}
	}
	require.Equal(t, http.StatusTooManyRequests, limited, res.body)
	res = e.form(ada, "/change-email", "email", "limited@example.com")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "error=RateLimited")

	// Deleting: a wrong confirmation (400), then deleted (JSON); g by form.
	requireAccountError(t, jsonForm(ada, "/delete-user", "confirm", "ada@example.com"), http.StatusBadRequest, "DeleteConfirmation")
	res = e.form(ada, "/delete-user", "confirm", "nope")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "error=DeleteConfirmation")

	// An old sign-in: the guarded changes want a recent one (403, JSON and form).
	e.clock.Add(11 * time.Minute)
	for _, p := range []string{"/unlink-account", "/link-account", "/delete-user"} {
		requireAccountError(t, jsonForm(g, p, "id", linked[0].ID, "provider", "idp", "confirm", "DELETE"),
			http.StatusForbidden, "SessionRequired")
		res = e.form(g, p, "id", linked[0].ID, "provider", "idp", "confirm", "DELETE")
		require.Equal(t, http.StatusFound, res.StatusCode, p)
		require.Contains(t, res.location(), "error=AccountReauth", p)
	}
	fresh := a.browser()
	e.signInByLink(fresh, "ada.fourth@example.com")
	requireOK(t, jsonForm(fresh, "/delete-user", "confirm", "ADA.fourth@example.com"))
	require.Empty(t, e.session(fresh))
	require.Empty(t, e.session(ada), "every session of the user ended")
	requireAccountError(t, e.get(ada, "/list-sessions"), http.StatusUnauthorized, "SessionRequired")

	e.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-oauth-only", PreferredUsername: "oo"})
	g2 := a.following()
	require.Equal(t, e.origin+"/", e.signIn(g2, "idp", e.origin+"/").location())
	res = e.form(noRedirects(g2), "/delete-user", "confirm", "DELETE")
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, e.base+"/signin", res.location())
	require.Empty(t, e.session(noRedirects(g2)))
}
