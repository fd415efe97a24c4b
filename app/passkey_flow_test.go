package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/passkeystore"
)

// startPasskeys is the e-mail setup (startMail) plus a webauthn provider
// "passkey". SERVICE_URL names localhost, not the listener's 127.0.0.1:
// a relying-party id must be a domain name. Requests still go to
// 127.0.0.1 (the cookie jar's host); the soft authenticator says it ran on
// the configured origin, as a browser on localhost would.
func startPasskeys(t testing.TB, b backend, mutate func(*config.Config)) *env {
	t.Helper()
	return startPasskeysWith(t, b, envOpts{config: mutate})
}

// startPasskeysWith is startPasskeys with more of o (hooks, say); o.config
// is applied after the passkey provider is added.
func startPasskeysWith(t testing.TB, b backend, o envOpts) *env {
	t.Helper()
	mutate := o.config
	o.config = func(c *config.Config) {
		c.ServiceURL = strings.Replace(c.ServiceURL, "127.0.0.1", "localhost", 1)
		c.Providers = append(c.Providers, config.Provider{ID: "passkey", Type: config.TypeWebAuthn})
		if mutate != nil {
			mutate(c)
		}
	}
	return startMail(t, b.opts(o))
}

// local is a URL of the app on the listener's address (the jar's host).
func (e *env) local(u string) string {
	return strings.Replace(u, e.origin, e.srv.URL, 1)
}

// emailSignIn signs c in by an e-mailed link and returns the user's id.
func (e *env) emailSignIn(c *http.Client, addr string) string {
	e.t.Helper()
	link := e.emailLink(c, addr, e.origin+"/home")
	res := e.get(c, e.local(link))
	require.Equal(e.t, http.StatusFound, res.StatusCode, res.body)
	got, id := e.sessionUser(c)
	require.Equal(e.t, addr, got)
	return id
}

// newKey is a soft authenticator for this app's origin and RP id.
func (e *env) newKey() *softKey {
	return newSoftKey(e.t, e.origin, "localhost")
}

// passkeyOptions is GET /webauthn-options/passkey?action=... : its options.
func (e *env) passkeyOptions(c *http.Client, action string) map[string]any {
	e.t.Helper()
	res := e.get(c, "/webauthn-options/passkey?action="+action)
	require.Equal(e.t, http.StatusOK, res.StatusCode, res.body)
	body := res.json(e.t)
	require.Equal(e.t, action, body["action"])
	return body["options"].(map[string]any)
}

// passkeyAnswer posts a ceremony's answer to /callback/passkey.
func (e *env) passkeyAnswer(c *http.Client, action, data string, extra url.Values) resp {
	e.t.Helper()
	form := url.Values{"csrfToken": {e.csrf(c)}, "action": {action}, "data": {data}, "callbackUrl": {e.origin + "/dashboard"}}
	for k, v := range extra {
		form[k] = v
	}
	return e.post(c, "/callback/passkey", form)
}

// addPasskey registers k for c's signed-in user under name.
func (e *env) addPasskey(c *http.Client, k *softKey, name string) {
	e.t.Helper()
	res := e.passkeyAnswer(c, "register", k.create(e.passkeyOptions(c, "register")), url.Values{"name": {name}})
	require.Equal(e.t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(e.t, e.base+"/passkeys?added=1", res.location())
}

// passkeySignIn answers fresh sign-in options with k.
func (e *env) passkeySignIn(c *http.Client, k *softKey) resp {
	e.t.Helper()
	return e.passkeyAnswer(c, "authenticate", k.get(e.passkeyOptions(c, "authenticate")), nil)
}

// passkeysOf is a user's stored passkeys.
func (e *env) passkeysOf(userID string) []models.Authenticator {
	e.t.Helper()
	list, err := passkeystore.New(e.app.Store()).AuthenticatorsOf(context.Background(), userID)
	require.NoError(e.t, err)
	return list
}

// requirePasskeyRefused asserts the documented refusal, that no session
// came of it, and that the logged cause names why.
func (e *env) requirePasskeyRefused(c *http.Client, res resp, cause ...string) {
	e.t.Helper()
	e.requireError(res, "WebAuthnVerificationError")
	addr, _ := e.sessionUser(c)
	require.Empty(e.t, addr, "a refused passkey signs nobody in")
	if len(cause) > 0 {
		lines := strings.Split(e.logs.String(), "\n")
		last := ""
		for _, l := range lines {
			if strings.Contains(l, "code=WebAuthnVerificationError") {
				last = l
			}
		}
		require.Contains(e.t, last, cause[0])
	}
}

// A user signed in by e-mail adds a passkey; a fresh browser signs in with
// it alone (no e-mail typed) and GET /session shows the user, in every
// strategy and database. The passkey is listed, named, with its last use.
func TestPasskeyRegisterAndSignIn(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasskeys(t, b, nil)
			c := e.browser()
			uid := e.emailSignIn(c, "ada@example.com")
			k := e.newKey()
			k.packed = b.postgres // packed self attestation on one run, none on the others
			e.addPasskey(c, k, "  My   laptop ")
			list := e.passkeysOf(uid)
			require.Len(t, list, 1)
			require.Equal(t, "My laptop", list[0].Name)
			require.Equal(t, "internal", list[0].Transports)
			require.Nil(t, list[0].LastUsedAt)

			page := e.get(c, "/passkeys")
			require.Equal(t, http.StatusOK, page.StatusCode)
			require.Contains(t, page.body, `value="My laptop"`)
			require.Contains(t, page.body, "never used")
			require.Contains(t, page.body, `src="/api/auth/static/passkeys.js"`)

			fresh := e.browser()
			res := e.passkeySignIn(fresh, k)
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, e.origin+"/dashboard", res.location(), e.logs.String())
			addr, id := e.sessionUser(fresh)
			require.Equal(t, "ada@example.com", addr)
			require.Equal(t, uid, id)
			list = e.passkeysOf(uid)
			require.EqualValues(t, 2, list[0].SignCount, "the counter of the sign-in")
			require.NotNil(t, list[0].LastUsedAt)

			// JSON mode, as the page's script asks: {url}.
			again := e.browser()
			res = e.passkeyAnswer(again, "authenticate", k.get(e.passkeyOptions(again, "authenticate")), url.Values{"json": {"true"}})
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Equal(t, e.origin+"/dashboard", res.json(t)["url"])
			addr, _ = e.sessionUser(again)
			require.Equal(t, "ada@example.com", addr)
		})
	}
}

// TestPasskeyNameIsCleaned: a passkey named with a NUL, a control
// character or bytes that are not UTF-8, at registration or by renaming,
// is stored under the cleaned name (signin.PasskeyName) on every backend:
// PostgreSQL answered such a name with a 500, SQLite stored it as sent.
func TestPasskeyNameIsCleaned(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := startPasskeys(t, b, nil)
			c := e.browser()
			uid := e.emailSignIn(c, "ada@example.com")
			e.addPasskey(c, e.newKey(), "Yubi\x00key\x1b \xff")
			list := e.passkeysOf(uid)
			require.Len(t, list, 1)
			require.Equal(t, "Yubikey \uFFFD", list[0].Name)

			// Renaming: a NUL or bytes that are not UTF-8 are refused at the
			// edge (TestBadTextPasskeyForms); control characters are dropped.
			res := e.post(c, "/passkeys/rename", url.Values{"csrfToken": {e.csrf(c)}, "id": {list[0].ID}, "name": {"Work\x1b lap\x7ftop\t"}})
			require.Equal(t, e.base+"/passkeys", res.location(), res.body)
			require.Equal(t, "Work laptop", e.passkeysOf(uid)[0].Name)
			require.Contains(t, e.get(c, "/passkeys").body, "value=\"Work laptop\"")
		})
	}
}

// GET /providers lists the passkey provider as Auth.js v5 does, and the
// sign-in page offers it (hidden until the script shows it) and passkey
// autofill on the e-mail field, with a CSP that allows only latchkey's
// own script.
func TestPasskeyProviderAndSignInPage(t *testing.T) {
	e := startPasskeys(t, backends()[0], nil)
	p := e.get(e.browser(), "/providers").json(t)["passkey"].(map[string]any)
	require.Equal(t, "webauthn", p["type"])
	require.Equal(t, e.base+"/callback/passkey", p["callbackUrl"])

	page := e.get(e.browser(), "/signin")
	require.Contains(t, page.body, "Sign in with a passkey")
	require.Contains(t, page.body, `autocomplete="email webauthn"`)
	require.Contains(t, page.body, `data-options-url="`+e.base+`/webauthn-options/passkey"`)
	csp := page.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "script-src 'self'; connect-src 'self'; ")
	require.NotContains(t, csp, "unsafe")

	js := e.get(e.browser(), "/static/passkeys.js")
	require.Equal(t, http.StatusOK, js.StatusCode)
	require.Contains(t, js.Header.Get("Content-Type"), "javascript")

	// Without a webauthn provider: no script, no script-src.
	plain := startMail(t, envOpts{})
	page = plain.get(plain.browser(), "/signin")
	require.NotContains(t, page.body, "<script")
	require.NotContains(t, page.Header.Get("Content-Security-Policy"), "script-src")
	require.Equal(t, http.StatusBadRequest, plain.get(plain.browser(), "/webauthn-options/email").StatusCode)
}

// Every refusal is WebAuthnVerificationError, signs nobody in and leaves
// the passkey as it was.
func TestPasskeyRefusals(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasskeys(t, b, nil)
			owner := e.browser()
			uid := e.emailSignIn(owner, "ada@example.com")
			k := e.newKey()
			e.addPasskey(owner, k, "laptop")
			stored := func() models.Authenticator { return e.passkeysOf(uid)[0] }

			t.Run("replayed answer (a counting key: its counter stops it)", func(t *testing.T) {
				c := e.browser()
				opts := e.passkeyOptions(c, "authenticate")
				challengeCookie, ok := e.jarCookie(c, e.challengeCookie())
				require.True(t, ok)
				answer := k.get(opts)
				res := e.passkeyAnswer(c, "authenticate", answer, nil)
				require.Equal(t, http.StatusFound, res.StatusCode, res.body)
				before := stored()

				// An attacker who kept the cookie and the answer.
				thief := e.browser()
				e.setJarCookieAt(thief, e.challengeCookie(), challengeCookie, e.path)
				e.requirePasskeyRefused(thief, e.passkeyAnswer(thief, "authenticate", answer, nil), "did not move forward")
				require.Equal(t, before, stored())
			})
			t.Run("expired challenge", func(t *testing.T) {
				before := stored()
				c := e.browser()
				answer := k.get(e.passkeyOptions(c, "authenticate"))
				e.clock.Add(6 * time.Minute)
				defer e.clock.Add(-6 * time.Minute)
				e.requirePasskeyRefused(c, e.passkeyAnswer(c, "authenticate", answer, nil), "challenge cookie expired")
				require.Equal(t, before, stored())
			})
			t.Run("no challenge cookie", func(t *testing.T) {
				c := e.browser()
				answer := k.get(e.passkeyOptions(c, "authenticate"))
				e.setJarCookieAt(c, e.challengeCookie(), "", e.path)
				e.requirePasskeyRefused(c, e.passkeyAnswer(c, "authenticate", answer, nil), "cookie was missing")
			})
			t.Run("counter going backwards", func(t *testing.T) {
				before := stored()
				k.count = before.SignCount - 1
				c := e.browser()
				e.requirePasskeyRefused(c, e.passkeySignIn(c, k), "did not move forward")
				c = e.browser()
				e.requirePasskeyRefused(c, e.passkeySignIn(c, k), "did not move forward")
				require.Equal(t, before.SignCount, stored().SignCount)
				k.count = before.SignCount + 10
			})
			for name, tc := range map[string]struct {
				forge func(*softKey)
				cause string
			}{
				"wrong origin": {func(k *softKey) { k.origin = "http://localhost.evil.example" }, "Error validating origin"},
				"wrong RP id":  {func(k *softKey) { k.rpID = "evil.example" }, "RP Hash mismatch"},
			} {
				t.Run(name, func(t *testing.T) {
					before := stored()
					evil := *k
					tc.forge(&evil)
					c := e.browser()
					e.requirePasskeyRefused(c, e.passkeySignIn(c, &evil), tc.cause)
					require.Equal(t, before, stored())
				})
			}
			t.Run("credential of another user", func(t *testing.T) {
				other := e.browser()
				otherID := e.emailSignIn(other, "bob@example.com")
				// Bob's own key, claiming Ada's credential id and user handle:
				// the signature is not Ada's key's.
				forged := e.newKey()
				forged.credID, forged.userHandle = k.credID, k.userHandle
				c := e.browser()
				e.requirePasskeyRefused(c, e.passkeySignIn(c, forged), "assertion signature")
				// Ada's key naming Bob as its user.
				mixed := *k
				mixed.userHandle = []byte(otherID)
				c = e.browser()
				e.requirePasskeyRefused(c, e.passkeySignIn(c, &mixed), "belongs to another user")
				require.Empty(t, e.passkeysOf(otherID))
			})
			t.Run("register for another session", func(t *testing.T) {
				// Options for Ada, answered from a browser signed in as nobody.
				opts := e.passkeyOptions(owner, "register")
				cookie, _ := e.jarCookie(owner, e.challengeCookie())
				c := e.browser()
				e.setJarCookieAt(c, e.challengeCookie(), cookie, e.path)
				res := e.passkeyAnswer(c, "register", e.newKey().create(opts), nil)
				require.Equal(t, e.base+"/passkeys?error=SessionRequired", res.location())
				require.Len(t, e.passkeysOf(uid), 1)
				require.Equal(t, http.StatusUnauthorized, e.get(e.browser(), "/webauthn-options/passkey?action=register").StatusCode)
			})
			t.Run("removed passkey", func(t *testing.T) {
				id := stored().ID
				res := e.post(owner, "/passkeys/remove", url.Values{"csrfToken": {e.csrf(owner)}, "id": {id}})
				require.Equal(t, http.StatusFound, res.StatusCode, res.body)
				require.Equal(t, e.base+"/passkeys", res.location())
				require.Empty(t, e.passkeysOf(uid))
				c := e.browser()
				e.requirePasskeyRefused(c, e.passkeySignIn(c, k), "look up the passkey: not found")
			})
		})
	}
}

// challengeCookie is the challenge cookie's name in this env.
func (e *env) challengeCookie() string {
	return "next-auth.challenge"
}

// counter_regression: warn signs in (logged) and keeps the stored counter.
func TestPasskeyCounterWarn(t *testing.T) {
	e := startPasskeys(t, backends()[0], func(c *config.Config) {
		for i := range c.Providers {
			if c.Providers[i].Type == config.TypeWebAuthn {
				c.Providers[i].CounterRegression = config.CounterWarn
			}
		}
	})
	owner := e.browser()
	uid := e.emailSignIn(owner, "ada@example.com")
	k := e.newKey()
	k.count = 7
	e.addPasskey(owner, k, "key")
	k.count = 3
	c := e.browser()
	res := e.passkeySignIn(c, k)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	addr, _ := e.sessionUser(c)
	require.Equal(t, "ada@example.com", addr)
	require.EqualValues(t, 7, e.passkeysOf(uid)[0].SignCount)
	require.Contains(t, e.logs.String(), "may be cloned")
}

// Rename and remove on the passkeys page: plain forms. The last way to sign
// in is kept; another user's passkey cannot be touched; a signed-out
// browser is sent to sign in.
func TestPasskeysPage(t *testing.T) {
	e := startPasskeys(t, backends()[0], func(c *config.Config) {
		// Passkeys only: once signed in, a passkey is the user's one way back.
		var only []config.Provider
		for _, p := range c.Providers {
			if p.Type == config.TypeWebAuthn {
				only = append(only, p)
			}
		}
		c.Providers = only
	})
	u := e.addUser("Ada", "ada@example.com", "")
	c := e.browser()
	e.setJarCookie(c, "next-auth.session-token", e.addDBSession(u, time.Now().Add(time.Hour)))
	k1, k2 := e.newKey(), e.newKey()
	e.addPasskey(c, k1, "one")
	e.addPasskey(c, k2, "two")
	list := e.passkeysOf(u.ID)
	require.Len(t, list, 2)

	res := e.post(c, "/passkeys/rename", url.Values{"csrfToken": {e.csrf(c)}, "id": {list[0].ID}, "name": {"Work laptop"}})
	require.Equal(t, e.base+"/passkeys", res.location())
	require.Equal(t, "Work laptop", e.passkeysOf(u.ID)[0].Name)

	// Someone else's session cannot rename or remove them.
	mallory := e.addUser("Mallory", "m@example.com", "")
	mc := e.browser()
	e.setJarCookie(mc, "next-auth.session-token", e.addDBSession(mallory, time.Now().Add(time.Hour)))
	res = e.post(mc, "/passkeys/remove", url.Values{"csrfToken": {e.csrf(mc)}, "id": {list[0].ID}})
	require.Equal(t, e.base+"/passkeys?error=NotFound", res.location())
	require.Len(t, e.passkeysOf(u.ID), 2)

	// A wrong csrfToken changes nothing.
	res = e.post(c, "/passkeys/remove", url.Values{"csrfToken": {"nope"}, "id": {list[0].ID}})
	require.Equal(t, e.base+"/passkeys?csrf=true", res.location())
	require.Len(t, e.passkeysOf(u.ID), 2)

	res = e.post(c, "/passkeys/remove", url.Values{"csrfToken": {e.csrf(c)}, "id": {list[0].ID}})
	require.Equal(t, e.base+"/passkeys", res.location())
	res = e.post(c, "/passkeys/remove", url.Values{"csrfToken": {e.csrf(c)}, "id": {list[1].ID}})
	require.Equal(t, e.base+"/passkeys?error=LastSignInMethod", res.location())
	require.Len(t, e.passkeysOf(u.ID), 1, "the last way to sign in is kept")
	page := e.get(c, "/passkeys?error=LastSignInMethod")
	require.Contains(t, page.body, "last way to sign in")

	signedOut := e.get(e.browser(), "/passkeys")
	require.Equal(t, http.StatusFound, signedOut.StatusCode)
	require.Equal(t, e.base+"/signin?callbackUrl="+url.QueryEscape(e.base+"/passkeys"), signedOut.location())
}

// rp_id may be a parent domain of SERVICE_URL's host: a passkey made for
// that domain (usable by sibling hosts) signs in at latchkey; one bound to
// latchkey's own host is refused there.
func TestPasskeyParentDomainRPID(t *testing.T) {
	e := startPasskeys(t, backends()[0], func(c *config.Config) {
		c.ServiceURL = strings.Replace(c.ServiceURL, "//localhost", "//auth.localhost", 1)
		for i := range c.Providers {
			if c.Providers[i].Type == config.TypeWebAuthn {
				c.Providers[i].RPID = "localhost"
			}
		}
	})
	require.Contains(t, e.origin, "//auth.localhost:")
	owner := e.browser()
	e.emailSignIn(owner, "ada@example.com")
	opts := e.passkeyOptions(owner, "register")
	require.Equal(t, "localhost", opts["rp"].(map[string]any)["id"])
	k := e.newKey() // rp id "localhost", origin http://auth.localhost:PORT
	res := e.passkeyAnswer(owner, "register", k.create(opts), nil)
	require.Equal(t, e.base+"/passkeys?added=1", res.location())

	c := e.browser()
	res = e.passkeySignIn(c, k)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	addr, _ := e.sessionUser(c)
	require.Equal(t, "ada@example.com", addr)

	own := *k
	own.rpID = "auth.localhost"
	c = e.browser()
	e.requirePasskeyRefused(c, e.passkeySignIn(c, &own), "RP Hash mismatch")
}

// Two instances on one PostgreSQL database with one secret: a challenge
// answered at one is refused at the other, though its sealed cookie opens
// there too (the answered challenges are in the shared database).
func TestPasskeyChallengeSingleUseAcrossInstances(t *testing.T) {
	pg := backend{"database-postgres", config.StrategyDatabase, true}
	a := startPasskeys(t, pg, nil)
	b := startPasskeys(t, pg, func(c *config.Config) {
		c.ServiceURL, c.DatabaseURL = a.cfg.ServiceURL, a.cfg.DatabaseURL
	})
	owner := a.browser()
	a.emailSignIn(owner, "ada@example.com")
	k := a.newKey()
	k.count = 0 // a synced passkey's counter stays 0: only the challenge stops a replay
	a.addPasskey(owner, k, "laptop")

	c := a.browser()
	k.count = 0
	answer := k.get(a.passkeyOptions(c, "authenticate"))
	cookie, ok := a.jarCookie(c, a.challengeCookie())
	require.True(t, ok)
	res := a.passkeyAnswer(c, "authenticate", answer, nil)
	require.Equal(t, a.origin+"/dashboard", res.location(), res.body)

	thief := b.browser()
	b.setJarCookieAt(thief, b.challengeCookie(), cookie, b.path)
	b.requirePasskeyRefused(thief, b.passkeyAnswer(thief, "authenticate", answer, nil), "challenge already used")
}

// syncedSignIn gives ada a synced passkey (counter 0) and signs c in with
// it: the answer and the challenge cookie it was made for, to replay.
func (e *env) syncedSignIn(c *http.Client) (answer, cookie string) {
	e.t.Helper()
	owner := e.browser()
	e.emailSignIn(owner, "ada@example.com")
	k := e.newKey()
	k.count, k.synced = 0, true
	e.addPasskey(owner, k, "phone")
	k.count = 0
	answer = k.get(e.passkeyOptions(c, "authenticate"))
	cookie, _ = e.jarCookie(c, e.challengeCookie())
	require.Equal(e.t, http.StatusFound, e.passkeyAnswer(c, "authenticate", answer, nil).StatusCode)
	return answer, cookie
}

// A synced passkey's counter stays 0, so a replayed answer (with the
// challenge cookie it was made for) is stopped by the challenge alone.
func TestPasskeyReplayWithoutCounter(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasskeys(t, b, nil)
			c := e.browser()
			answer, cookie := e.syncedSignIn(c)
			addr, _ := e.sessionUser(c)
			require.Equal(t, "ada@example.com", addr)

			thief := e.browser()
			e.setJarCookieAt(thief, e.challengeCookie(), cookie, e.path)
			e.requirePasskeyRefused(thief, e.passkeyAnswer(thief, "authenticate", answer, nil), "challenge already used")
			require.True(t, e.passkeysOf(e.onlyUser().ID)[0].BackupState, "a synced passkey's backup state is kept")
		})
	}
}

// A password is a way to sign in too: with passkeys and passwords only, a
// user who has a password may remove their last passkey; one without may
// not.
func TestPasskeyLastOneGoesWhenAPasswordRemains(t *testing.T) {
	e := startPasskeys(t, backends()[0], func(c *config.Config) {
		only := []config.Provider{{ID: "credentials", Type: config.TypeCredentials}}
		for _, p := range c.Providers {
			if p.Type == config.TypeWebAuthn {
				only = append(only, p)
			}
		}
		c.Providers = only
	})
	for _, tc := range []struct {
		addr     string
		password bool
		want     string
	}{
		{"pw@example.com", true, "/passkeys"},
		{"nopw@example.com", false, "/passkeys?error=LastSignInMethod"},
	} {
		var u *models.User
		if tc.password {
			u = e.addPasswordUser(tc.addr, "correct horse battery staple", true)
		} else {
			u = e.addUser("", tc.addr, "")
		}
		c := e.browser()
		e.setJarCookie(c, "next-auth.session-token", e.addDBSession(u, time.Now().Add(time.Hour)))
		e.addPasskey(c, e.newKey(), "only")
		list := e.passkeysOf(u.ID)
		require.Len(t, list, 1)
		res := e.post(c, "/passkeys/remove", url.Values{"csrfToken": {e.csrf(c)}, "id": {list[0].ID}})
		require.Equal(t, e.base+tc.want, res.location(), tc.addr)
		require.Len(t, e.passkeysOf(u.ID), map[bool]int{true: 0, false: 1}[tc.password], tc.addr)
	}
}

// A passkey outlives sessions and password resets, so adding one takes a
// recent sign-in: more than 10 minutes after signing in, the options are
// refused (401, with the sign-in page back to the passkeys page in url,
// where the page's script goes) and an answer started in time but posted late is refused
// on the page (SessionRequired), nothing stored; signing in again allows it.
func TestPasskeyAddingNeedsARecentSignIn(t *testing.T) {
	for _, b := range backends()[:2] {
		t.Run(b.name, func(t *testing.T) {
			e := startPasskeys(t, b, nil)
			c := e.browser()
			uid := e.emailSignIn(c, "ada@example.com")
			k := e.newKey()

			e.clock.Add(11 * time.Minute)
			res := e.get(c, "/webauthn-options/passkey?action=register&lang=de")
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
			require.Contains(t, res.body, "Sign in again")
			signInAgain := e.base + "/signin?" + url.Values{"callbackUrl": {e.base + "/passkeys"}}.Encode()
			require.Equal(t, signInAgain+"&lang=de", res.json(t)["url"], "the page's script goes to sign in, back to the page")
			res = e.get(e.browser(), "/webauthn-options/passkey?action=register")
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
			require.Equal(t, signInAgain, res.json(t)["url"], "signed out (the session ended while the page was open): the same")

			c2 := e.browser()
			e.emailSignIn(c2, "ada@example.com")
			e.clock.Add(9 * time.Minute)
			opts := e.passkeyOptions(c2, "register") // in time
			e.clock.Add(2 * time.Minute)
			res = e.passkeyAnswer(c2, "register", k.create(opts), url.Values{"name": {"late"}})
			require.Equal(t, e.base+"/passkeys?error=SessionRequired", res.location())
			require.Empty(t, e.passkeysOf(uid), "nothing stored")

			c3 := e.browser()
			e.emailSignIn(c3, "ada@example.com")
			e.addPasskey(c3, k, "fresh")
			require.Len(t, e.passkeysOf(uid), 1)
		})
	}
}

// A security key found without its PIN (an answer without the UV flag)
// signs nobody in by default: the documented refusal, nothing recorded
// (the counter and last use stay), and the options ask the browser for
// user verification. Registering one stays possible (user_verification:
// preferred). With sign_in_user_verification: preferred, as before, the
// same answer signs in.
func TestPasskeySignInNeedsUserVerification(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasskeys(t, b, nil)
			owner := e.browser()
			uid := e.emailSignIn(owner, "ada@example.com")
			k := e.newKey()
			k.noUV = true
			e.addPasskey(owner, k, "key without PIN")
			before := e.passkeysOf(uid)[0]

			c := e.browser()
			opts := e.passkeyOptions(c, "authenticate")
			require.Equal(t, "required", opts["userVerification"])
			e.requirePasskeyRefused(c, e.passkeyAnswer(c, "authenticate", k.get(opts), nil), "User verification required")
			after := e.passkeysOf(uid)[0]
			require.Equal(t, before.SignCount, after.SignCount, "the counter is not moved by a refused sign-in")
			require.Nil(t, after.LastUsedAt)

			k.noUV = false // the PIN typed
			res := e.passkeySignIn(c, k)
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			addr, _ := e.sessionUser(c)
			require.Equal(t, "ada@example.com", addr)
		})
	}
	t.Run("opt-out", func(t *testing.T) {
		e := startPasskeys(t, backends()[0], func(c *config.Config) {
			for i := range c.Providers {
				if c.Providers[i].Type == config.TypeWebAuthn {
					c.Providers[i].SignInUserVerification = "preferred"
				}
			}
		})
		owner := e.browser()
		e.emailSignIn(owner, "ada@example.com")
		k := e.newKey()
		k.noUV = true
		e.addPasskey(owner, k, "key without PIN")
		c := e.browser()
		opts := e.passkeyOptions(c, "authenticate")
		require.Equal(t, "preferred", opts["userVerification"])
		res := e.passkeyAnswer(c, "authenticate", k.get(opts), nil)
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		addr, _ := e.sessionUser(c)
		require.Equal(t, "ada@example.com", addr)
	})
}

// A rolling upgrade: options made by an instance that still takes answers
// without user verification, answered at one that requires it (same
// database and secret, so the challenge cookie opens there): the answer
// without the UV flag is refused by the setting in effect, not the one
// sealed in the cookie.
func TestPasskeyUserVerificationOutlivesTheCookie(t *testing.T) {
	lax := startPasskeys(t, backends()[0], func(c *config.Config) {
		for i := range c.Providers {
			if c.Providers[i].Type == config.TypeWebAuthn {
				c.Providers[i].SignInUserVerification = "preferred"
			}
		}
	})
	strict := startPasskeys(t, backends()[0], func(c *config.Config) {
		c.ServiceURL, c.DataDir = lax.cfg.ServiceURL, lax.cfg.DataDir // one SQLite file
	})
	owner := lax.browser()
	uid := lax.emailSignIn(owner, "ada@example.com")
	k := lax.newKey()
	k.noUV = true
	lax.addPasskey(owner, k, "key without PIN")

	c := lax.browser()
	answer := k.get(lax.passkeyOptions(c, "authenticate"))
	cookie, ok := lax.jarCookie(c, lax.challengeCookie())
	require.True(t, ok)
	c = strict.browser()
	strict.setJarCookieAt(c, strict.challengeCookie(), cookie, strict.path)
	strict.requirePasskeyRefused(c, strict.passkeyAnswer(c, "authenticate", answer, nil), "User verification required")
	require.Nil(t, lax.passkeysOf(uid)[0].LastUsedAt)
}

// A passkey is a way in that outlives every session and a password reset,
// as a linked identity is, so the owner's verified address is told when
// one is added or removed (an intruder's passkey, made from a borrowed or
// stolen session, does not go unnoticed). A rename, a sign-in and a
// refused removal tell nothing.
func TestPasskeyChangesAreToldByEmail(t *testing.T) {
	e := startPasskeys(t, backends()[0], nil)
	owner := e.browser()
	uid := e.emailSignIn(owner, "ada@example.com") // mail 1: the sign-in link
	k := e.newKey()
	e.addPasskey(owner, k, "laptop")
	m, p := e.mail(2)
	require.Equal(t, []string{"ada@example.com"}, m.To)
	require.Contains(t, p.Subject, "A sign-in method was added to your account")
	require.Contains(t, p.Text, "A passkey was added to your account")
	require.Contains(t, p.Text, e.base+"/passkeys", "the mail leads to the passkeys page, where it can be removed")
	require.NotContains(t, p.Text, "laptop", "the name, which whoever added it chose, is not repeated")

	id := e.passkeysOf(uid)[0].ID
	res := e.post(owner, "/passkeys/rename", url.Values{"csrfToken": {e.csrf(owner)}, "id": {id}, "name": {"work"}})
	require.Equal(t, e.base+"/passkeys", res.location())
	c := e.browser()
	require.Equal(t, http.StatusFound, e.passkeySignIn(c, k).StatusCode)
	require.Len(t, e.smtp.Mails(), 2, "no notice for a rename or a sign-in")

	res = e.post(owner, "/passkeys/remove", url.Values{"csrfToken": {e.csrf(owner)}, "id": {id}})
	require.Equal(t, e.base+"/passkeys", res.location())
	m, p = e.mail(3)
	require.Equal(t, []string{"ada@example.com"}, m.To)
	require.Contains(t, p.Subject, "A sign-in method was removed from your account")
	require.Contains(t, p.Text, "A passkey was removed from your account")

	// In the language of the page that made the change.
	k2 := e.newKey()
	res = e.passkeyAnswer(owner, "register", k2.create(e.passkeyOptions(owner, "register")), url.Values{"lang": {"fr"}})
	require.Equal(t, e.base+"/passkeys?added=1&lang=fr", res.location())
	_, p = e.mail(4)
	require.Contains(t, p.Text, "Une clé d'accès a été ajoutée à votre compte")
	res = e.post(owner, "/passkeys/remove", url.Values{"csrfToken": {e.csrf(owner)}, "id": {e.passkeysOf(uid)[0].ID}, "lang": {"de"}})
	require.Equal(t, e.base+"/passkeys?lang=de", res.location())
	_, p = e.mail(5)
	require.Contains(t, p.Text, "Von Ihrem Konto auf")
}

// Answered challenges are purged once they expire, by whichever instance
// runs the purge, and clocks differ a little between instances. An instance
// whose clock runs a minute ahead purges an answered challenge while its
// cookie still opens at the others: an answer replayed then (a synced
// passkey, counter 0: only the challenge stops it) is refused all the same.
func TestPasskeyReplayAfterAPurgeByAClockAhead(t *testing.T) {
	e := startPasskeys(t, backends()[0], nil)
	answer, cookie := e.syncedSignIn(e.browser())

	e.clock.Add(4*time.Minute + 30*time.Second) // the cookie still opens here
	ahead := time.Now().Add(4*time.Minute + 30*time.Second + time.Minute)
	_, err := e.app.Store().PurgeExpired(context.Background(), ahead)
	require.NoError(t, err)

	thief := e.browser()
	e.setJarCookieAt(thief, e.challengeCookie(), cookie, e.path)
	e.requirePasskeyRefused(thief, e.passkeyAnswer(thief, "authenticate", answer, nil), "challenge already used")
}

// A passkey that cannot be stored because the database fails (here: its
// table of answered challenges gone) is not added, and the passkeys page
// says so: the user is not left on a page without a word.
func TestPasskeyNotAddedInAnOutageSaysSo(t *testing.T) {
	e := startPasskeys(t, backends()[0], nil)
	c := e.browser()
	uid := e.emailSignIn(c, "ada@example.com")
	opts := e.passkeyOptions(c, "register")
	require.NoError(t, e.app.Store().DB().Exec("DROP TABLE webauthn_challenges").Error)
	res := e.passkeyAnswer(c, "register", e.newKey().create(opts), nil)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	page := e.get(c, e.local(res.location()))
	require.Equal(t, http.StatusOK, page.StatusCode)
	require.Contains(t, page.body, "Something went wrong on our side")
	require.Empty(t, e.passkeysOf(uid))
	require.Regexp(t, `level=ERROR msg="passkey not added" code=Callback`, e.logs.String(), "the server's failure, not a refusal")
}

// A rename or a removal the database fails (here: a trigger that refuses
// every change to the passkeys) is the account pages' outage answer, the
// "try again later" page (503), not a bare 500: nothing changed, the cause
// logged once as the server's failure.
func TestPasskeyChangeInAnOutageSaysTryLater(t *testing.T) {
	e := startPasskeys(t, backends()[0], nil)
	c := e.browser()
	uid := e.emailSignIn(c, "ada@example.com")
	e.addPasskey(c, e.newKey(), "one")
	e.addPasskey(c, e.newKey(), "two")
	id := e.passkeysOf(uid)[0].ID
	db := e.app.Store().DB()
	require.NoError(t, db.Exec("CREATE TRIGGER no_rename BEFORE UPDATE ON authenticators BEGIN SELECT RAISE(FAIL, 'disk I/O error'); END").Error)
	require.NoError(t, db.Exec("CREATE TRIGGER no_remove BEFORE DELETE ON authenticators BEGIN SELECT RAISE(FAIL, 'disk I/O error'); END").Error)
	for _, tc := range []struct{ path, step string }{
		{"/passkeys/rename", "rename a passkey"},
		{"/passkeys/remove", "remove a passkey"},
	} {
		before := strings.Count(e.logs.String(), "disk I/O error")
		res := e.post(c, tc.path, url.Values{"csrfToken": {e.csrf(c)}, "id": {id}, "name": {"renamed"}, "lang": {"fr"}})
		require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "%s: %s", tc.path, res.body)
		require.Contains(t, res.body, "<h1>Réessayez plus tard</h1>", tc.path) // the outage page, in the page's language
		require.Equal(t, before+1, strings.Count(e.logs.String(), "disk I/O error"), "%s: logged once", tc.path)
		require.Regexp(t, `level=ERROR msg="request failed" path=\S+`+tc.path+` step="`+tc.step+`"`, e.logs.String())
		list := e.passkeysOf(uid)
		require.Len(t, list, 2, "nothing removed")
		for _, k := range list {
			require.NotEqual(t, "renamed", k.Name, "nothing renamed")
		}
	}
}

// The SignIn hook refusing a passkey sign-in spends the challenge all the
// same: an answered challenge is never good again, whether the sign-in it
// answered was allowed or not. Otherwise the answer and its challenge
// cookie (a synced passkey's counter stays 0: only the challenge stops a
// replay) would sign in once the hook allows it, at another moment or for
// whoever captured them. The refusal is AccessDenied, nobody signed in.
func TestPasskeyRefusedSignInSpendsTheChallenge(t *testing.T) {
	eachDatabase(t, func(t *testing.T, postgres bool) {
		var refuse atomic.Bool
		hooks := &signin.Hooks{SignIn: func(_ context.Context, in signin.SignInInput) (bool, string) {
			return !(refuse.Load() && in.Type == "webauthn"), ""
		}}
		e := startPasskeysWith(t, backend{strategy: config.StrategyDatabase, postgres: postgres}, envOpts{hooks: hooks})
		owner := e.browser()
		e.emailSignIn(owner, "ada@example.com")
		k := e.newKey()
		k.count, k.synced = 0, true
		e.addPasskey(owner, k, "phone")

		refuse.Store(true)
		c := e.browser()
		answer := k.get(e.passkeyOptions(c, "authenticate"))
		cookie, ok := e.jarCookie(c, e.challengeCookie())
		require.True(t, ok)
		e.requireError(e.passkeyAnswer(c, "authenticate", answer, nil), "AccessDenied")
		addr, _ := e.sessionUser(c)
		require.Empty(t, addr, "the hook refused: nobody signed in")

		refuse.Store(false)
		thief := e.browser()
		e.setJarCookieAt(thief, e.challengeCookie(), cookie, e.path)
		e.requirePasskeyRefused(thief, e.passkeyAnswer(thief, "authenticate", answer, nil), "challenge already used")
	})
}
