package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

func threeProviders(c *config.Config) {
	c.Providers = []config.Provider{
		{ID: "github", ClientID: "gh-id", ClientSecret: "gh-secret"},
		{ID: "email", Type: config.TypeEmail, Server: "smtp://127.0.0.1:9"},
		{ID: "google", ClientID: "g-id", ClientSecret: "g-secret", Name: "Google Workspace"},
	}
}

// orderedKeys returns the keys of a JSON object in document order.
func orderedKeys(t *testing.T, body string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

func TestProviders(t *testing.T) {
	e := startEnv(t, envOpts{config: threeProviders})
	res := e.get(e.client, "/providers")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"))
	require.Empty(t, res.Header.Values("Set-Cookie"), "next-auth sets no cookies on /providers")
	require.Equal(t, []string{"github", "email", "google"}, orderedKeys(t, res.body), "config order is kept")

	var got map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.body), &got))
	want := map[string]map[string]any{
		"github": {"id": "github", "name": "GitHub", "type": "oauth",
			"signinUrl": "http://localhost:3000/api/auth/signin/github", "callbackUrl": "http://localhost:3000/api/auth/callback/github"},
		"email": {"id": "email", "name": "Email", "type": "email",
			"signinUrl": "http://localhost:3000/api/auth/signin/email", "callbackUrl": "http://localhost:3000/api/auth/callback/email"},
		"google": {"id": "google", "name": "Google Workspace", "type": "oauth",
			"signinUrl": "http://localhost:3000/api/auth/signin/google", "callbackUrl": "http://localhost:3000/api/auth/callback/google"},
	}
	require.Equal(t, want, got, "exactly id, name, type, signinUrl, callbackUrl")

	// Even with cookies (valid or not) on the request, /providers sets none.
	e.csrf(e.client)
	res = e.get(e.client, "/providers")
	require.Empty(t, res.Header.Values("Set-Cookie"))
	res = e.rawDo(http.MethodGet, "/providers", "next-auth.csrf-token=junk; next-auth.callback-url=https%3A%2F%2Fevil.test", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Empty(t, res.Header.Values("Set-Cookie"))
}

func TestProvidersOIDCWireType(t *testing.T) {
	for style, want := range map[string]string{config.StyleNextAuth: "oauth", config.StyleAuthJS: "oidc"} {
		t.Run(style, func(t *testing.T) {
			e := startEnv(t, envOpts{config: func(c *config.Config) {
				c.Cookies.Style = style
				c.Providers = []config.Provider{{ID: "sso", Type: config.TypeOIDC, Name: "Company SSO",
					Issuer: "https://sso.example.com", ClientID: "id", ClientSecret: "secret"}}
			}})
			var got map[string]map[string]any
			require.NoError(t, json.Unmarshal([]byte(e.get(e.client, "/providers").body), &got))
			require.Equal(t, want, got["sso"]["type"], "v4 knows only oauth; Auth.js says oidc")
			require.Equal(t, "Company SSO", got["sso"]["name"])
		})
	}
}

func TestProvidersNone(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) { c.Providers = nil }})
	res := e.get(e.client, "/providers")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "{}", res.body)
}

// A SERVICE_URL spelt with upper-case letters in its host or with its
// scheme's default port names the origin next-auth's parseUrl (new URL)
// makes of it: the URLs latchkey hands out (here /providers') are the
// ones the next-auth client, given the same NEXTAUTH_URL, expects, and the
// origin a browser sends.
func TestProvidersServiceURLOriginNormalised(t *testing.T) {
	for _, serviceURL := range []string{"https://Auth.Example.COM:443/api/auth", "https://auth.example.com:/api/auth",
		"https://auth.example.com/x/%2e%2e/api/./auth/"} { // dot segments resolved as new URL() does
		e := startEnv(t, envOpts{config: func(c *config.Config) {
			threeProviders(c)
			c.ServiceURL = serviceURL
			c.Secret = testSecret
		}})
		// The path a browser (and the next-auth client) asks for.
		res := e.get(e.client, e.srv.URL+"/api/auth/providers")
		require.Equal(t, http.StatusOK, res.StatusCode, serviceURL)
		var got map[string]map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.body), &got))
		require.Equal(t, "https://auth.example.com/api/auth/signin/github", got["github"]["signinUrl"], serviceURL)
		require.Equal(t, "https://auth.example.com/api/auth/callback/github", got["github"]["callbackUrl"], serviceURL)
	}
}
