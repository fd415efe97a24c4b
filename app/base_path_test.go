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

func TestBasePath(t *testing.T) {
	cases := []struct {
		serviceURL string
		base       string // absolute base URL (next-auth's parseUrl)
		path       string
		others     []string // paths that are not routes of this app
	}{
		{"http://localhost:3000/api/auth", "http://localhost:3000/api/auth", "/api/auth", []string{"/custom/auth/csrf", "/csrf", "/api/authx/csrf"}},
		{"https://example.com/custom/auth", "https://example.com/custom/auth", "/custom/auth", []string{"/api/auth/csrf", "/custom/csrf", "/custom/authx/csrf", "/csrf"}},
		{"http://localhost:3000/", "http://localhost:3000/api/auth", "/api/auth", []string{"/csrf", "/signin"}},
		{"http://localhost:3000", "http://localhost:3000/api/auth", "/api/auth", []string{"/csrf"}},
		{"example.com/idp/auth/", "https://example.com/idp/auth", "/idp/auth", []string{"/api/auth/csrf", "/idp/csrf"}},
		{"auth.example.com:8443", "https://auth.example.com:8443/api/auth", "/api/auth", []string{"/csrf"}},
		{"http://127.0.0.1:9999/a/b/c", "http://127.0.0.1:9999/a/b/c", "/a/b/c", []string{"/a/b/csrf", "/api/auth/csrf"}},
	}
	for _, tc := range cases {
		t.Run(tc.serviceURL, func(t *testing.T) {
			e := startEnv(t, envOpts{config: func(c *config.Config) {
				c.ServiceURL = tc.serviceURL
				threeProviders(c)
			}})
			require.Equal(t, tc.base, e.base)
			require.Equal(t, tc.path, e.path)
			origin := tc.base[:len(tc.base)-len(tc.path)]

			// Every route is served under the base path.
			for _, p := range []string{"/csrf", "/session", "/providers", "/signin", "/signout", "/error", "/verify-request", "/static/style.css"} {
				res := e.rawDo(http.MethodGet, p, "", nil)
				require.Equal(t, http.StatusOK, res.StatusCode, p)
			}

			// Provider URLs are absolute under the base.
			var prov map[string]map[string]string
			require.NoError(t, json.Unmarshal([]byte(e.get(e.client, "/providers").body), &prov))
			for id, p := range prov {
				require.Equal(t, tc.base+"/signin/"+id, p["signinUrl"])
				require.Equal(t, tc.base+"/callback/"+id, p["callbackUrl"])
			}

			// Page forms and the stylesheet use the base.
			res := e.rawDo(http.MethodGet, "/signin", "", nil)
			page := requireHTML(t, res, http.StatusOK)
			for i, f := range page.forms() {
				require.True(t, strings.HasPrefix(f.action, tc.base+"/signin/"), "form %d: %s", i, f.action)
			}
			requireOwnURLsOnly(t, page, origin)
			require.Contains(t, res.body, `href="`+tc.path+`/static/style.css"`)
			page = requireHTML(t, e.rawDo(http.MethodGet, "/signout", "", nil), http.StatusOK)
			require.Equal(t, tc.base+"/signout", page.forms()[0].action)

			// Redirects are absolute under the base.
			res = e.rawDo(http.MethodGet, "/error?error=OAuthSignin", "", nil)
			require.Equal(t, tc.base+"/signin?error=OAuthSignin", res.Header.Get("Location"))
			res = e.rawDo(http.MethodPost, "/signout", "", strings.NewReader(url.Values{"csrfToken": {"x"}}.Encode()),
				"Content-Type", "application/x-www-form-urlencoded")
			require.Equal(t, tc.base+"/signout?csrf=true", res.Header.Get("Location"))

			// Outside the base path: plain 404 (not next-auth's 400).
			for _, p := range append(tc.others, "/", "/favicon.ico") {
				res := e.rawDo(http.MethodGet, e.srv.URL+p, "", nil)
				require.Equal(t, http.StatusNotFound, res.StatusCode, p)
				require.Empty(t, res.Header.Values("Set-Cookie"), p)
			}
			// Inside it, an unknown action is next-auth's 400.
			for _, p := range []string{"", "/", "/nope", "/csrf/x", "/providers/x", "/_log", "/SIGNIN"} {
				res := e.rawDo(http.MethodGet, p, "", nil)
				require.Equal(t, http.StatusBadRequest, res.StatusCode, p)
				require.Equal(t, "Error: This action with HTTP GET is not supported by NextAuth.js", res.body, p)
			}
		})
	}
}
