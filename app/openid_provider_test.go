package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/models/groupstore"
	"github.com/latchkey-auth/latchkey/models/openidstore"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
)

// TestOpenIDCodeFlow: a signed-in user allows an application on the
// consent page; the application exchanges the code (PKCE, client secret)
// for an ID token that verifies against the published keys, with the
// nonce echoed and the user's claims; userinfo answers the access token.
// Once allowed, the next authorization asks nothing. Both session
// strategies, both databases.
func TestOpenIDCodeFlow(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startOP(t, b, nil)
			c := e.signedIn("ada@example.com")
			r := e.relyingParty("app", rpSecret)

			page, a := r.authorize(c)
			require.Contains(t, page.body, "Example App")
			res := e.consent(c, page, "allow")
			tok, id, err := r.exchange(r.codeFrom(res, a), a)
			require.NoError(t, err)
			var claims struct {
				Email    string `json:"email"`
				Verified bool   `json:"email_verified"`
				AuthTime int64  `json:"auth_time"`
			}
			require.NoError(t, id.Claims(&claims))
			require.Equal(t, "ada@example.com", claims.Email)
			require.True(t, claims.Verified)
			require.NotZero(t, claims.AuthTime)

			info, err := r.provider.UserInfo(r.ctx(), r.oauth.TokenSource(r.ctx(), tok))
			require.NoError(t, err)
			require.Equal(t, id.Subject, info.Subject)
			require.Equal(t, "ada@example.com", info.Email)

			// Consent is remembered: straight back to the client.
			res, a = r.authorize(c)
			_, _, err = r.exchange(r.codeFrom(res, a), a)
			require.NoError(t, err)
			require.Equal(t, http.StatusFound, res.StatusCode)
		})
	}
}

// TestOpenIDGroupsClaim: the groups scope gives the groups claim — the
// groups an admin gave (users groups add) and a config rule's for the
// verified domain — in the ID token and at userinfo; a first-party client
// skips the consent page.
func TestOpenIDGroupsClaim(t *testing.T) {
	e := startOP(t, backends()[0], func(c *config.Config) {
		c.Groups.Rules = []config.GroupRule{{Domains: []string{"example.com"}, Groups: []string{"staff"}}}
	})
	c := e.signedIn("ada@example.com")
	u, err := e.app.Store().UserByEmail(context.Background(), "ada@example.com")
	require.NoError(t, err)
	_, err = groupstore.New(e.app.Store()).Add(context.Background(), u.ID, "admins", time.Now())
	require.NoError(t, err)

	r := e.relyingParty("tool", rpSecret, "openid", "groups")
	res, a := r.authorize(c)
	tok, id, err := r.exchange(r.codeFrom(res, a), a)
	require.NoError(t, err)
	var claims struct {
		Groups []string `json:"groups"`
	}
	require.NoError(t, id.Claims(&claims))
	require.Equal(t, []string{"admins", "staff"}, claims.Groups)
	info, err := r.provider.UserInfo(r.ctx(), r.oauth.TokenSource(r.ctx(), tok))
	require.NoError(t, err)
	require.NoError(t, info.Claims(&claims))
	require.Equal(t, []string{"admins", "staff"}, claims.Groups)
}

// TestOpenIDFormActionNamesClients: the pages' Content-Security-Policy
// lets a form's redirects end on a client's redirect and post-logout URIs
// (Chromium checks form-action on every hop after a POST: the consent,
// the sign-in of a waiting request, the logout page), config.yaml's and
// those an admin adds while latchkey runs.
func TestOpenIDFormActionNamesClients(t *testing.T) {
	e := startOP(t, backends()[0], func(c *config.Config) {
		c.OpenID.Clients[0].RedirectURIs = []string{"https://app.example.org/cb"}
		c.OpenID.Clients[0].PostLogoutRedirectURIs = []string{"https://app.example.org/bye"}
	})
	formAction := func() []string {
		return cspDirectives(t, e.get(e.client, "/signin").Header.Get("Content-Security-Policy"))["form-action"]
	}
	require.Contains(t, formAction(), "https://app.example.org")
	require.NotContains(t, formAction(), "https://later.example.net")

	rules, err := openid.New(openidstore.New(e.app.Store()), nil, openid.Settings{Algorithm: "RS256", IDTTL: time.Hour}, []string{testSecret}, time.Now, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	_, err = rules.AddClient(context.Background(), openid.NewClient{ID: "later", RedirectURIs: []string{"https://later.example.net/cb"}})
	require.NoError(t, err)
	e.clock.Add(11 * time.Second) // the stored clients are re-read every 10 s
	require.Contains(t, formAction(), "https://later.example.net")
}

// TestOpenIDNativeAppRedirect: a native app registered with a
// private-use scheme redirect URI (RFC 8252 §7.1, which config.yaml and
// `clients add` accept) signs its user in: the consent ends on that URI
// with the code, which exchanges; another URI of the scheme is refused
// with a 400 page, never redirected to.
func TestOpenIDNativeAppRedirect(t *testing.T) {
	eachOP(t, func(c *config.Config) {
		c.OpenID.Clients = append(c.OpenID.Clients, config.OpenIDClient{ID: "native", Name: "Native App", Public: true,
			RedirectURIs: []string{nativeRedirect, "http://127.0.0.1:9/native"}, PostLogoutRedirectURIs: []string{"http://127.0.0.1:9/bye"}})
	}, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("native", "")
		r.oauth.RedirectURL = nativeRedirect
		page, a := r.authorize(c)
		require.Contains(t, page.body, "Native App")
		require.Contains(t, page.body, "<strong>com.example.app</strong>", "the consent page names where the answer goes")
		res := e.consent(c, page, "allow")
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		u, err := url.Parse(res.location())
		require.NoError(t, err)
		require.Equal(t, nativeRedirect, u.Scheme+":"+u.Path, "the consent ends on the native redirect URI")
		require.Equal(t, a.state, u.Query().Get("state"))
		_, _, err = r.exchange(u.Query().Get("code"), a)
		require.NoError(t, err)

		// Its loopback URI on another port (RFC 8252 §7.3): allowed
		// already, straight back with a code.
		res, a = r.authorize(c, "redirect_uri", "http://127.0.0.1:5555/native")
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		require.True(t, strings.HasPrefix(res.location(), "http://127.0.0.1:5555/native?"), res.location())

		// Only the port may differ: another loopback address, localhost,
		// https or a user part is not the registered URI (the library's
		// own match ignored all but the path and query).
		requests := e.authRequests()
		for _, other := range []string{"com.example.app:/elsewhere", "http://localhost:5555/native", "http://127.0.0.2:5555/native",
			"http://[::1]:5555/native", "https://127.0.0.1:5555/native", "http://x@127.0.0.1:5555/native"} {
			res, _ = r.authorize(c, "redirect_uri", other)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", other, res.body)
			require.Empty(t, res.location(), other)
		}
		require.Equal(t, requests, e.authRequests())

		// The same rule for its post_logout_redirect_uri (the library's
		// own match ignored all but the path and query there too).
		logout := func(uri string) resp {
			return e.post(e.browser(), "/oidc/end_session", url.Values{"client_id": {"native"}, "post_logout_redirect_uri": {uri}})
		}
		for _, same := range []string{"http://127.0.0.1:9/bye", "http://127.0.0.1:5555/bye"} {
			res = logout(same)
			require.Equal(t, http.StatusFound, res.StatusCode, "%s: %s", same, res.body)
			require.Equal(t, same, e.follow(e.browser(), res.location()).location(), "no session: straight on")
		}
		for _, other := range []string{"http://localhost:5555/bye", "http://127.0.0.2:5555/bye", "http://[::1]:5555/bye",
			"https://127.0.0.1:5555/bye", "http://x@127.0.0.1:5555/bye", "http://127.0.0.1:5555/bye?x=1"} {
			res = logout(other)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", other, res.body)
			require.Contains(t, res.body, "invalid_request", other)
			require.Empty(t, res.location(), other)
		}
		res = e.post(e.browser(), "/oidc/end_session", url.Values{"client_id": {"native"},
			"post_logout_redirect_uri": {"http://127.0.0.1:9/bye", "http://localhost:5555/bye"}})
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "the value the library reads is the last: %s", res.body)
	})
}

// nativeRedirect is a native app's private-use scheme redirect URI.
const nativeRedirect = "com.example.app:/oauth2redirect"

// TestOpenIDFormActionNamesNativeSchemes: a native app's private-use
// scheme is in the pages' form-action as a scheme source, and its loopback
// redirect URI's host on any port (the library matches it on any port):
// the consent page's POST ends, through the library's callback, on that
// URI, and Chromium (Android's Custom Tabs included) checks every hop of
// it against form-action, so without them the user who allowed the app
// stayed on the consent page and the app never got its code. No whole web
// scheme is ever allowed.
func TestOpenIDFormActionNamesNativeSchemes(t *testing.T) {
	e := startOP(t, backends()[0], func(c *config.Config) {
		c.OpenID.Clients = append(c.OpenID.Clients, config.OpenIDClient{ID: "native", Name: "Native App", Public: true,
			RedirectURIs: []string{nativeRedirect, "http://127.0.0.1:9/native"}, PostLogoutRedirectURIs: []string{"Org.Example.Other:/bye"}})
	})
	c := e.signedIn(ada)
	r := e.relyingParty("native", "")
	r.oauth.RedirectURL = nativeRedirect
	page, _ := r.authorize(c)
	require.Contains(t, page.body, "Native App")
	formAction := cspDirectives(t, page.Header.Get("Content-Security-Policy"))["form-action"]
	require.Contains(t, formAction, "com.example.app:")
	require.Contains(t, formAction, "org.example.other:")
	require.Contains(t, formAction, "http://127.0.0.1:*")
	for _, src := range formAction {
		require.NotContains(t, []string{"http:", "https:", "*"}, src, "form-action allows a whole web scheme")
	}
}

// TestOpenIDAccountApps: the account page lists the applications the user
// allowed, and revoking one ends its tokens and asks for consent again.
func TestOpenIDAccountApps(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startOP(t, b, nil)
			c := e.signedIn("ada@example.com")
			r := e.relyingParty("app", rpSecret, "openid", "email", "offline_access")
			page, a := r.authorize(c)
			tok, _, err := r.exchange(r.codeFrom(e.consent(c, page, "allow"), a), a)
			require.NoError(t, err)

			list := e.get(c, "/list-apps")
			require.Equal(t, http.StatusOK, list.StatusCode, list.body)
			require.Contains(t, list.body, `"clientId":"app"`)
			require.Contains(t, list.body, `"name":"Example App"`)
			require.Contains(t, e.get(c, "/account").body, "Example App")

			res := e.post(c, "/revoke-app", url.Values{"csrfToken": {e.csrf(c)}, "clientId": {"app"}, "json": {"true"}})
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.NotContains(t, e.get(c, "/list-apps").body, `"clientId":"app"`)
			_, err = r.provider.UserInfo(r.ctx(), oauth2.StaticTokenSource(tok))
			require.Error(t, err, "the access token ended with the consent")
			_, err = r.oauth.TokenSource(r.ctx(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			require.Error(t, err, "the refresh token too")

			page, _ = r.authorize(c)
			require.Equal(t, http.StatusOK, page.StatusCode, "consent is asked again")
			require.Contains(t, page.body, `name="decision"`)
		})
	}
}
