package app_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// notText are request values PostgreSQL refuses in a text column (a NUL
// byte, SQLSTATE 22021 for invalid UTF-8) and SQLite stores.
var notText = map[string]string{"NUL": "\x00", "invalid UTF-8": "\xff"}

// A value that is not text — in a form, a query or a protocol request —
// is refused where it comes in, on every database: a 400 (the protocol's
// JSON error on the token, revocation and introspection endpoints), no
// 5xx, no ERROR line, nothing stored or ended. next-auth's own routes keep
// their documented answers (CredentialsSignin, Verification).
func TestBadTextIsRefusedAtTheEdge(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startOP(t, b, func(c *config.Config) {
				c.Providers = append(c.Providers, config.Provider{Type: config.TypeCredentials, ID: "credentials"})
			})
			c := e.signedIn("text@example.com")
			app := e.relyingParty("app", rpSecret)
			before, requests := e.counts(), e.authRequests()
			for name, bad := range notText {
				t.Run(name, func(t *testing.T) {
					page := func(what string, res resp) {
						t.Helper()
						require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", what, res.body)
						require.NotContains(t, strings.ToLower(res.body), "sql", what)
						require.NotContains(t, res.body, "byte sequence", what)
					}
					post := func(path string, form url.Values) resp {
						form.Set("csrfToken", e.csrf(c))
						return e.post(c, path, form)
					}
					// The account centre and the passkeys page.
					page("revoke-session", post("/revoke-session", url.Values{"id": {bad}}))
					page("revoke-app", post("/revoke-app", url.Values{"clientId": {bad}}))
					page("unlink-account", post("/unlink-account", url.Values{"id": {bad}}))
					page("a bad key", post("/revoke-session", url.Values{"id" + bad: {"x"}}))
					// The provider's pages.
					q := "?id=" + url.QueryEscape(bad)
					page("continue", e.get(c, "/oidc/continue"+q))
					page("callback", e.get(c, "/oidc/authorize/callback"+q))
					page("consent", post("/oidc/consent", url.Values{"id": {bad}, "decision": {"allow"}}))
					page("logout", e.get(c, "/oidc/logout?logout="+url.QueryEscape(bad)))

					// The protocol: authorization (a page: nothing is sent
					// back to the client with a value it cannot have sent).
					for _, p := range []string{"state", "nonce", "login_hint", "code_challenge", "client_id", "redirect_uri"} {
						target, _ := app.authorizeURL(p, "x"+bad)
						page("authorize "+p, e.get(c, target))
						form, _ := url.Parse(target)
						page("authorize posted "+p, e.rawDo(http.MethodPost, e.base+"/oidc/authorize", "", strings.NewReader(form.RawQuery),
							"Content-Type", "application/x-www-form-urlencoded"))
					}
					page("end_session", e.get(c, "/oidc/end_session?client_id="+url.QueryEscape(bad)))
					// Token, revocation, introspection: RFC 6749 §5.2's JSON error.
					for _, ep := range []string{"token_endpoint", "revocation_endpoint", "introspection_endpoint"} {
						for _, form := range []url.Values{
							{"client_id": {bad}, "client_secret": {"x"}, "grant_type": {"authorization_code"}, "code": {"x"}, "token": {"x"}},
							{"client_id": {"app"}, "client_secret": {rpSecret}, "grant_type": {"authorization_code"}, "code": {bad}, "token": {bad}},
						} {
							res := app.call(http.MethodPost, app.endpoint(ep), form)
							require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", ep, res.body)
							var body map[string]string
							require.NoError(t, json.Unmarshal([]byte(res.body), &body), res.body)
							require.Equal(t, "invalid_request", body["error"], ep)
							res = app.call(http.MethodPost, app.endpoint(ep)+"?client_id="+url.QueryEscape(bad), url.Values{"token": {"x"}})
							require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s query: %s", ep, res.body)
							res = app.call(http.MethodPost, app.endpoint(ep), url.Values{"token": {"x"}}, "Authorization", basicAuth(bad, rpSecret))
							require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s basic: %s", ep, res.body)
						}
					}

					// next-auth's routes keep their answers.
					b := e.browser()
					res := e.post(b, "/callback/credentials", url.Values{"csrfToken": {e.csrf(b)}, "json": {"true"},
						"email": {"text@example.com"}, "password": {"pass" + bad + "word"}})
					require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
					require.JSONEq(t, `{"url":"`+e.base+`/error?error=CredentialsSignin&provider=credentials"}`, res.body)
					res = e.get(b, "/callback/email?token="+url.QueryEscape(bad)+"&email="+url.QueryEscape(bad))
					require.Equal(t, http.StatusFound, res.StatusCode, res.body)
					require.Equal(t, e.base+"/error?error=Verification", res.location())
					res = e.post(b, "/signin/email", url.Values{"csrfToken": {e.csrf(b)}, "email": {"a" + bad + "@example.com"}})
					require.Equal(t, http.StatusFound, res.StatusCode, res.body)
					require.Equal(t, e.base+"/error?error=EmailSignin", res.location())
					// The password pages keep their notices.
					for _, f := range [][]string{
						{"/signup", "email", "a" + bad + "@example.com", "password", goodPassword},
						{"/signup", "email", "new@example.com", "password", goodPassword + bad},
						{"/reset", "email", "a" + bad + "@example.com"},
						{"/signup/verify", "token", bad, "password", goodPassword},
						{"/reset/confirm", "token", bad, "password", goodPassword},
					} {
						res = e.form(c, f[0], f[1:]...)
						require.Equal(t, http.StatusBadRequest, res.StatusCode, "%q: %s", f, res.body)
						require.Contains(t, res.body, "<!doctype html>", "%q: the page, not the bare 400", f)
					}
					require.Equal(t, http.StatusOK, e.get(c, "/csrf?callbackUrl="+url.QueryEscape("/"+bad)).StatusCode)
					require.NotEmpty(t, e.session(c), "still signed in")

					require.Equal(t, before, e.counts(), "nothing stored, nothing ended")
					require.Equal(t, requests, e.authRequests())
					require.NotContains(t, e.logs.String(), "level=ERROR")
				})
			}
		})
	}
}

// The passkeys page's forms refuse an id that is not text alike. A new
// passkey's transports (what the browser says, unchecked: hints passed
// back in later options) keep only the values WebAuthn defines, so a NUL
// or junk there neither fails the store on PostgreSQL nor is kept.
func TestBadTextPasskeyForms(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasskeys(t, b, func(c *config.Config) { c.OpenID.Enabled = false })
			c := e.browser()
			uid := e.emailSignIn(c, "keys@example.com")
			k := e.newKey()
			k.transports = []string{"usb", "x\x00y", "hybrid", strings.Repeat("z", 1000), "usb", "a,b"}
			e.addPasskey(c, k, "key")
			require.Equal(t, "usb,hybrid", e.passkeysOf(uid)[0].Transports)
			before := e.counts()
			for name, bad := range notText {
				for _, p := range []string{"/passkeys/rename", "/passkeys/remove"} {
					res := e.post(c, p, url.Values{"csrfToken": {e.csrf(c)}, "id": {bad}, "name": {"x"}})
					require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s %s: %s", p, name, res.body)
				}
			}
			require.Equal(t, before, e.counts())
			require.NotEmpty(t, e.session(c))
			require.NotContains(t, e.logs.String(), "level=ERROR")
		})
	}
}
