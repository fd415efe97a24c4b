package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// A SERVICE_URL, rp_id and webauthn origins: written with a Unicode host
// are the xn-- names browsers report: a passkey made on the service's
// page and used on the extra origin (written with a trailing /) signs in,
// its clientDataJSON carrying the punycode origins a browser writes.
func TestPasskeysOnUnicodeHost(t *testing.T) {
	var port string
	e := startPasskeys(t, backends()[0], func(c *config.Config) {
		u, err := url.Parse(c.ServiceURL)
		require.NoError(t, err)
		port = u.Port()
		c.ServiceURL = "http://Auth.Bücher.localhost:" + port + "/api/auth"
		for i := range c.Providers {
			if c.Providers[i].Type == config.TypeWebAuthn {
				c.Providers[i].RPID = "Bücher.localhost"
				c.Providers[i].Origins = []string{"http://App.Bücher.localhost:" + port + "/"}
			}
		}
	})
	own := "http://auth.xn--bcher-kva.localhost:" + port // new URL(SERVICE_URL).origin
	require.Equal(t, own, e.origin)
	owner := e.browser()
	e.emailSignIn(owner, "ada@example.com")
	opts := e.passkeyOptions(owner, "register")
	require.Equal(t, "xn--bcher-kva.localhost", opts["rp"].(map[string]any)["id"])
	k := newSoftKey(t, own, "xn--bcher-kva.localhost")
	res := e.passkeyAnswer(owner, "register", k.create(opts), nil)
	require.Equal(t, e.base+"/passkeys?added=1", res.location(), e.logs.String())

	k.origin = "http://app.xn--bcher-kva.localhost:" + port
	c := e.browser()
	res = e.passkeySignIn(c, k)
	require.Equal(t, http.StatusFound, res.StatusCode, e.logs.String())
	addr, _ := e.sessionUser(c)
	require.Equal(t, "ada@example.com", addr)
}

// cookies.domain and allowed_redirect_origins written with a Unicode host
// are the xn-- names browsers send: the session cookie carries
// Domain=xn--…, and a callbackUrl on the allowed origin as a browser's
// location.href writes it is followed.
func TestUnicodeCookieDomainAndRedirectOrigins(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) {
		c.ServiceURL = "http://auth.Bücher.example/api/auth"
		c.Cookies.Domain = ".Bücher.example"
		c.AllowedRedirectOrigins = []string{"https://App.Bücher.example/"}
	}})
	require.Equal(t, "http://auth.xn--bcher-kva.example", e.origin)
	tok, _, sess := e.aliceSessionRead()
	require.Equal(t, "xn--bcher-kva.example", sess.Domain, sess.raw)

	target := "https://app.xn--bcher-kva.example/after"
	require.Equal(t, target, e.rawSignOutTo(tok, target).Header.Get("Location"))
	// A callbackUrl written with the Unicode host (a page that builds it
	// from a string rather than location.href): next-auth's new URL()
	// check reads it as the allowed origin, and so does latchkey; the
	// browser is sent to the xn-- form.
	require.Equal(t, target, e.rawSignOutTo(tok, "https://App.Bücher.example/after").Header.Get("Location"))
}

// An OpenID client's redirect URI written with a Unicode host matches the
// xn-- one a relying party that builds it with new URL() (next-auth among
// them) sends.
func TestOpenIDRedirectURIOnUnicodeHost(t *testing.T) {
	e := startOP(t, backends()[0], func(c *config.Config) {
		c.OpenID.Clients = append(c.OpenID.Clients, config.OpenIDClient{ID: "idn", Secret: rpSecret, FirstParty: true,
			RedirectURIs: []string{"https://Bücher.example/cb"}})
	})
	r := e.relyingParty("idn", rpSecret)
	res, _ := r.authorize(e.signedIn(ada), "redirect_uri", "https://xn--bcher-kva.example/cb")
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.True(t, strings.HasPrefix(res.location(), "https://xn--bcher-kva.example/cb?code="), res.location())
}
