package app_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// The account page's API, driven as a custom account page would: JSON
// answers (json=true), the CSRF dance, a cookie jar per browser.

// apiPost posts fields to an account API route in JSON mode.
func (e *env) apiPost(c *http.Client, path string, fields ...string) resp {
	e.t.Helper()
	f := url.Values{"csrfToken": {e.csrf(c)}, "json": {"true"}}
	for i := 0; i+1 < len(fields); i += 2 {
		f.Set(fields[i], fields[i+1])
	}
	return e.post(c, path, f)
}

type listedSession struct {
	ID         string    `json:"id"`
	Current    bool      `json:"current"`
	CreatedAt  time.Time `json:"createdAt"`
	LastSeenAt time.Time `json:"lastSeenAt"`
	Device     string    `json:"device"`
	Network    string    `json:"network"`
}

// sessionsOf is GET /list-sessions through c.
func (e *env) sessionsOf(c *http.Client) []listedSession {
	e.t.Helper()
	res := e.get(c, "/list-sessions")
	require.Equal(e.t, http.StatusOK, res.StatusCode, res.body)
	var out []listedSession
	require.NoError(e.t, json.Unmarshal([]byte(res.body), &out))
	return out
}

// apiError asserts a JSON refusal.
func (e *env) apiError(res resp, status int, code string) {
	e.t.Helper()
	require.Equal(e.t, status, res.StatusCode, res.body)
	require.JSONEq(e.t, `{"error":"`+code+`"}`, res.body)
}

const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

// Three sessions of one user, in either strategy: listed with this one
// marked and where each started; one ended, then all others; the ended
// browsers are signed out; another user's session id is not found and
// ends nothing.
func TestAccountSessions(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			e.addPasswordUser("ada@example.com", goodPassword, true)
			a, phone, tablet := e.browser(), e.browser(), e.browser()
			require.Equal(t, http.StatusOK, e.passwordSignIn(a, "ada@example.com", goodPassword, "User-Agent", firefox).StatusCode)
			e.clock.Add(time.Second)
			e.passwordSignIn(phone, "ada@example.com", goodPassword)
			e.passwordSignIn(tablet, "ada@example.com", goodPassword)

			list := e.sessionsOf(a)
			require.Len(t, list, 3)
			var mine, others []listedSession
			for _, s := range list {
				if s.Current {
					mine = append(mine, s)
				} else {
					others = append(others, s)
				}
			}
			require.Len(t, mine, 1)
			require.Equal(t, "Firefox 128 on Linux", mine[0].Device)
			require.Equal(t, "127.0.0.0/24", mine[0].Network, "a /24, never the address")
			require.NotContains(t, e.get(a, "/list-sessions").body, "127.0.0.1")

			// Another user's session: not found, nothing ended.
			e.addPasswordUser("bob@example.com", goodPassword, true)
			bob := e.browser()
			e.passwordSignIn(bob, "bob@example.com", goodPassword)
			bobs := e.sessionsOf(bob)
			require.Len(t, bobs, 1)
			e.apiError(e.apiPost(a, "/revoke-session", "id", bobs[0].ID), http.StatusNotFound, "NotFound")
			require.NotEmpty(t, e.session(bob))

			phoneID := ""
			for _, s := range e.sessionsOf(phone) {
				if s.Current {
					phoneID = s.ID
				}
			}
			res := e.apiPost(a, "/revoke-session", "id", phoneID)
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Empty(t, e.session(phone), "the ended session is signed out")
			require.NotEmpty(t, e.session(tablet))
			require.Len(t, e.sessionsOf(a), 2)
			e.apiError(e.apiPost(a, "/revoke-session", "id", phoneID), http.StatusNotFound, "NotFound")

			res = e.apiPost(a, "/revoke-other-sessions")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.EqualValues(t, 1, res.json(t)["revoked"])
			require.Empty(t, e.session(tablet))
			require.NotEmpty(t, e.session(a), "this session stays")
			require.Len(t, e.sessionsOf(a), 1)
			require.NotEmpty(t, e.session(bob), "another user's sessions stay")

			e.apiError(e.get(e.browser(), "/list-sessions"), http.StatusUnauthorized, "SessionRequired")
			e.apiError(e.post(a, "/revoke-other-sessions", url.Values{"json": {"true"}}), http.StatusForbidden, "MissingCSRF")
		})
	}
}

// Unlinking an identity needs a recent sign-in, is never the last way to
// sign in, and is told to the address; linking goes through the
// provider's sign-in.
func TestAccountLinkAndUnlink(t *testing.T) {
	e := startEnv(t, envOpts{clock: &testClock{now: time.Now().UTC().Truncate(time.Second)}, smtp: &smtptest.Options{}}.oidc(func(c *config.Config) {
		idp2 := c.Providers[0]
		idp2.ID, idp2.Name = "idp2", "Second IdP"
		c.Providers = append(c.Providers, idp2)
	}, nil))
	c := e.following(e.browser())
	res := e.signIn(c, "idp", e.origin+"/home")
	require.Equal(t, e.origin+"/home", res.location(), res.body)

	list := e.accountsOf(c)
	require.Len(t, list, 1)

	res = e.post(c, "/link-account", url.Values{"csrfToken": {e.csrf(c)}, "provider": {"idp2"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, e.base+"/account", res.Request.URL.String(), "linked through the IdP, back on the page")
	require.Contains(t, res.body, "Second IdP")
	require.Len(t, e.sessionsOf(c), 1, "the session the link replaced is gone, not listed")
	list = e.accountsOf(c)
	require.Len(t, list, 2)
	require.NotEmpty(t, list[1]["label"], "the provider's address or name is shown")

	e.clock.Add(11 * time.Minute)
	e.apiError(e.apiPost(c, "/unlink-account", "id", list[1]["id"].(string)), http.StatusForbidden, "SessionRequired")
	e.apiError(e.apiPost(c, "/link-account", "provider", "idp2"), http.StatusForbidden, "SessionRequired")
	e.form(c, "/signout")
	e.signIn(c, "idp", e.origin+"/home")
	n := len(e.smtp.Mails())
	res = e.apiPost(c, "/unlink-account", "id", list[1]["id"].(string))
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	require.Len(t, e.accountsOf(c), 1)
	require.Contains(t, e.mailAt(n+1).Text, "Second IdP", "the address is told")
	e.apiError(e.apiPost(c, "/unlink-account", "id", list[1]["id"].(string)), http.StatusNotFound, "NotFound")

	// Without an e-mail provider, the one identity is the only way in.
	solo := startOIDC(t, nil, nil)
	s := solo.following(solo.browser())
	solo.signIn(s, "idp", solo.origin+"/home")
	only := solo.accountsOf(s)
	solo.apiError(solo.apiPost(s, "/unlink-account", "id", only[0]["id"].(string)), http.StatusConflict, "LastSignInMethod")
	require.Len(t, solo.accountsOf(s), 1)
}

// accountsOf is GET /list-accounts through c.
func (e *env) accountsOf(c *http.Client) []map[string]any {
	e.t.Helper()
	res := e.get(c, "/list-accounts")
	require.Equal(e.t, http.StatusOK, res.StatusCode, res.body)
	var out []map[string]any
	require.NoError(e.t, json.Unmarshal([]byte(res.body), &out))
	return out
}

// Changing the e-mail: a link to the new address changes it when its page's
// button is pressed, once; the old address is told; an address another
// user has gets a notice instead, and the answer is the same. The session
// shows the new address at once, however long session.cache_ttl keeps
// the copy of it read before.
func TestAccountEmailChange(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startPasswords(t, envOpts{postgres: pg, config: func(c *config.Config) { c.Session.CacheTTL = config.Duration(time.Minute) }})
		e.addPasswordUser("ada@example.com", goodPassword, true)
		e.addPasswordUser("bob@example.com", goodPassword, true)
		c := e.browser()
		e.passwordSignIn(c, "ada@example.com", goodPassword)

		n := e.mailCount()
		res := e.apiPost(c, "/change-email", "email", "Bob@Example.com")
		require.Equal(t, http.StatusOK, res.StatusCode, "the same answer for a taken address: %s", res.body)
		taken := e.mailAt(n + 1)
		require.NotContains(t, taken.Text, "/account/email/confirm", "a notice, no link")
		e.apiError(e.apiPost(c, "/change-email", "email", "ada@example.com"), http.StatusBadRequest, "BadAddress")
		e.apiError(e.apiPost(c, "/change-email", "email", "not an address"), http.StatusBadRequest, "BadAddress")
		// Not UTF-8: refused at the edge (a value that is not text), before
		// the rules' own BadAddress.
		require.Equal(t, http.StatusBadRequest, e.apiPost(c, "/change-email", "email", "\xff@example.com").StatusCode)
		require.Equal(t, n+1, e.mailCount(), "no link for an address that is not UTF-8")

		res = e.apiPost(c, "/change-email", "email", "ada.new@example.com")
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		link, _ := e.flowLink(n+2, "/account/email/confirm")
		token := linkQuery(t, link).Get("token")
		page := e.get(e.browser(), link)
		require.Equal(t, http.StatusOK, page.StatusCode)
		require.Contains(t, page.body, "ada.new@example.com")
		addr, _ := e.sessionUser(c)
		require.Equal(t, "ada@example.com", addr, "opening the link changes nothing")

		other := e.browser()
		res = e.post(other, "/account/email/confirm", url.Values{"csrfToken": {e.csrf(other)}, "token": {token}, "json": {"true"}})
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		u, err := e.app.Store().UserByEmail(t.Context(), "ada.new@example.com")
		require.NoError(t, err)
		require.NotNil(t, u.EmailVerified)
		require.Contains(t, e.mailAt(n+3).Subject, "", "the old address is told")
		require.Equal(t, "ada@example.com", strings.ToLower(e.mailTo(n+3)))
		addr, _ = e.sessionUser(c)
		require.Equal(t, "ada.new@example.com", addr, "GET /session after the change")
		res = e.post(other, "/account/email/confirm", url.Values{"csrfToken": {e.csrf(other)}, "token": {token}, "json": {"true"}})
		e.apiError(res, http.StatusGone, "Verification")
		require.Equal(t, http.StatusOK, e.passwordSignIn(e.browser(), "ada.new@example.com", goodPassword).StatusCode)

		// A session that signed in longer ago may not start one: the link
		// proves the new address, not the owner. Nothing is sent.
		e.clock.Add(11 * time.Minute)
		n = e.mailCount()
		e.apiError(e.apiPost(c, "/change-email", "email", "ada.other@example.com"), http.StatusForbidden, "SessionRequired")
		// E-mail is sent before the answer (synchronously): a refusal has
		// nothing in flight to wait for.
		require.Equal(t, n, e.mailCount(), "a refused change sent an e-mail")
		addr, _ = e.sessionUser(c)
		require.Equal(t, "ada.new@example.com", addr, "the session stands")
	})
}

// Deleting the account: a recent sign-in and the typed address; then the
// old cookie is no session, nothing of the user remains, and an operator
// can turn it off.
func TestAccountDelete(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			u := e.addPasswordUser("ada@example.com", goodPassword, true)
			c, other := e.browser(), e.browser()
			e.passwordSignIn(c, "ada@example.com", goodPassword)
			e.passwordSignIn(other, "ada@example.com", goodPassword)
			e.apiError(e.apiPost(c, "/delete-user", "confirm", "ada@example.org"), http.StatusBadRequest, "DeleteConfirmation")
			require.NotEmpty(t, e.session(c))
			e.clock.Add(11 * time.Minute)
			e.apiError(e.apiPost(c, "/delete-user", "confirm", "ada@example.com"), http.StatusForbidden, "SessionRequired")
			e.passwordSignIn(c, "ada@example.com", goodPassword)
			e.clock.Add(time.Second)
			// Pending links of every kind: a reset, an e-mail change.
			require.Equal(t, http.StatusOK, e.form(e.browser(), "/reset", "email", "ada@example.com").StatusCode)
			require.Equal(t, http.StatusOK, e.apiPost(c, "/change-email", "email", "ada.new@example.com").StatusCode)
			require.EqualValues(t, 2, e.counts().VerificationTokens)
			res := e.apiPost(c, "/delete-user", "confirm", "ADA@example.com")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Zero(t, e.counts().VerificationTokens, "no pending link of the user outlives it")
			require.Empty(t, e.session(c))
			require.Empty(t, e.session(other), "every session of the user ends")
			_, err := e.app.Store().UserByID(t.Context(), u.ID)
			require.Error(t, err)
			require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(e.browser(), "ada@example.com", goodPassword).StatusCode)
		})
	}
	t.Run("off", func(t *testing.T) {
		e := startPasswords(t, envOpts{config: func(c *config.Config) { c.Account.SelfDelete = false }})
		e.addPasswordUser("ada@example.com", goodPassword, true)
		c := e.browser()
		e.passwordSignIn(c, "ada@example.com", goodPassword)
		e.apiError(e.apiPost(c, "/delete-user", "confirm", "ada@example.com"), http.StatusForbidden, "AccessDenied")
		require.NotEmpty(t, e.session(c))
	})
}

// A JWT without a sign-in time of its own (next-auth's encode, sharing the
// secret during a migration) carries an iat that next-auth renews on every
// re-encode: it proves no recent sign-in, before latchkey re-issues it or
// after (auth_time taken from that iat), until the user signs in here.
func TestAccountStepUpNextAuthToken(t *testing.T) {
	e := startPasswords(t, envOpts{strategy: config.StrategyJWT})
	u := e.addPasswordUser("ada@example.com", goodPassword, true)
	c := e.browser()
	e.setJarCookie(c, "next-auth.session-token", jwtCookie(t, map[string]any{"sub": u.ID, "email": "ada@example.com"}, e.clock.Now()))
	for _, when := range []string{"as next-auth minted it", "re-issued by latchkey"} {
		require.NotEmpty(t, e.session(c), when)
		e.apiError(e.apiPost(c, "/delete-user", "confirm", "ada@example.com"), http.StatusForbidden, "SessionRequired")
		e.apiError(e.apiPost(c, "/change-email", "email", "ada.new@example.com"), http.StatusForbidden, "SessionRequired")
	}
	e.passwordSignIn(c, "ada@example.com", goodPassword)
	res := e.apiPost(c, "/delete-user", "confirm", "ada@example.com")
	require.Equal(t, http.StatusOK, res.StatusCode, "a sign-in here proves it: %s", res.body)
}

// The page shows the user, the methods and the sessions, and its forms
// come back to it with a notice.
func TestAccountPage(t *testing.T) {
	e := startPasswords(t, envOpts{})
	e.addPasswordUser("ada@example.com", goodPassword, true)
	res := e.get(e.browser(), "/account")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "/signin?callbackUrl=")
	c, phone := e.browser(), e.browser()
	e.passwordSignIn(c, "ada@example.com", goodPassword, "User-Agent", firefox)
	e.passwordSignIn(phone, "ada@example.com", goodPassword)
	page := e.get(c, "/account")
	require.Equal(t, http.StatusOK, page.StatusCode, page.body)
	for _, want := range []string{"ada@example.com", "Firefox 128 on Linux", e.base + "/revoke-other-sessions", e.base + "/change-email", e.base + "/delete-user"} {
		require.Contains(t, page.body, want)
	}
	res = e.form(c, "/revoke-other-sessions")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, e.base+"/account?notice=OtherSessionsEnded&count=1", res.location())
	require.Empty(t, e.session(phone))
	require.Contains(t, e.get(c, res.location()).body, "Other sessions ended: 1.")
	// A count latchkey never wrote shows no notice, not a made-up number.
	for _, count := range []string{"-5", "+3", "99999999999", "100001", "abc", "", "1e3"} {
		page := e.get(c, "/account?notice=OtherSessionsEnded&count="+url.QueryEscape(count))
		require.Equal(t, http.StatusOK, page.StatusCode, count)
		require.NotContains(t, page.body, "Other sessions ended", count)
	}
	res = e.form(c, "/delete-user", "confirm", "nope")
	require.Equal(t, e.base+"/account?error=DeleteConfirmation", res.location())
	require.Equal(t, http.StatusBadRequest, e.get(c, "/account?error=DeleteConfirmation").StatusCode)
}

// mailTo is the recipient of the n-th e-mail (1-based).
func (e *env) mailTo(n int) string {
	e.t.Helper()
	m, _ := e.mail(n)
	require.Len(e.t, m.To, 1)
	return m.To[0]
}

// Deleting an account while sign-ins race it: afterwards no browser holds
// a session of the deleted user, whichever sign-ins won — a database
// session's row or a JWT's sign-in record cannot outlive the user, and a
// token minted before the deletion is revoked.
func TestAccountDeleteRacesSignIns(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			u := e.addPasswordUser("ada@example.com", goodPassword, true)
			owner := e.browser()
			e.passwordSignIn(owner, "ada@example.com", goodPassword)
			// A clock on a whole second, the hard case: a racing token's
			// auth_time is the deletion's own second (auth_time has whole
			// seconds), which the revocation must still cover.
			e.clock.Add(time.Second)
			racers, tokens := make([]*http.Client, 6), make([]string, 6)
			for i := range racers {
				racers[i] = e.browser()
				tokens[i] = e.csrf(racers[i])
			}
			done := make(chan struct{})
			for i, c := range racers {
				go func() {
					defer func() { done <- struct{}{} }()
					form := url.Values{"email": {"ada@example.com"}, "password": {goodPassword}, "json": {"true"}, "csrfToken": {tokens[i]}}
					req, _ := http.NewRequest(http.MethodPost, e.url("/callback/credentials"), strings.NewReader(form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					if res, err := c.Do(req); err == nil {
						res.Body.Close()
					}
				}()
			}
			res := e.apiPost(owner, "/delete-user", "confirm", "ada@example.com")
			for range racers {
				<-done
			}
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			_, err := e.app.Store().UserByID(t.Context(), u.ID)
			require.Error(t, err, "the user is gone")
			for i, c := range racers {
				require.Empty(t, e.session(c), "racer %d holds no session of the deleted user", i)
			}
		})
	}
}
