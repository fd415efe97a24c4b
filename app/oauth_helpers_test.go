package app_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
)

// oauthEnv is a running latchkey wired to a real OpenID Connect server
// (mockoidc: real discovery, RS256-signed id_tokens, PKCE and nonce,
// single-use codes) over real HTTP.
type oauthEnv struct {
	t      *testing.T
	app    *app.App
	srv    *httptest.Server
	idp    *mockoidc.MockOIDC
	base   string // e.g. http://127.0.0.1:1234/api/auth
	origin string
	client *http.Client
}

const testSecret = "test-secret-0123456789abcdef0123456789abcdef"

// newOAuthEnv boots mockoidc and latchkey; mutate adjusts the config.
func newOAuthEnv(t *testing.T, mutate func(*config.Config)) *oauthEnv {
	t.Helper()
	return newOAuthEnvWithHooks(t, mutate, nil)
}

// newOAuthEnvWithHooks is newOAuthEnv with operator hooks.
func newOAuthEnvWithHooks(t *testing.T, mutate func(*config.Config), hooks *app.Hooks) *oauthEnv {
	t.Helper()
	idp, err := mockoidc.Run()
	require.NoError(t, err)
	t.Cleanup(func() { _ = idp.Shutdown() })

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	origin := "http://" + l.Addr().String()
	cfg := config.Defaults()
	cfg.ServiceURL = origin + "/api/auth"
	cfg.Secret = testSecret
	cfg.DataDir = t.TempDir()
	cfg.DatabaseURL = filepath.Join(cfg.DataDir, "test.db")
	cfg.Providers = []config.Provider{{
		ID: "idp", Type: config.TypeOIDC, Name: "Test IdP",
		Issuer: idp.Issuer(), ClientID: idp.Config().ClientID, ClientSecret: idp.Config().ClientSecret,
	}}
	if mutate != nil {
		mutate(&cfg)
	}
	_, err = cfg.Validate(app.CatalogueExtra)
	require.NoError(t, err)
	a, err := app.New(cfg, app.Options{Hooks: hooks, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: a.Handler()}}
	srv.Start()
	t.Cleanup(func() { srv.Close(); _ = a.Close() })

	e := &oauthEnv{t: t, app: a, srv: srv, idp: idp, base: cfg.ServiceURL, origin: origin}
	e.client = e.newClient()
	return e
}

// newClient is a browser: a cookie jar, following redirects within latchkey
// and the IdP, stopping at the first hop outside them (the app's page).
func (e *oauthEnv) newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{
		Jar:     jar,
		Timeout: 10 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			u := req.URL.String()
			if strings.HasPrefix(u, e.base) || strings.HasPrefix(u, e.idp.Issuer()) {
				return nil
			}
			return http.ErrUseLastResponse
		},
	}
}

func (e *oauthEnv) csrf(c *http.Client) string {
	e.t.Helper()
	var body struct{ CSRFToken string }
	e.getJSON(c, "/csrf", &body)
	require.Len(e.t, body.CSRFToken, 64)
	return body.CSRFToken
}

func (e *oauthEnv) getJSON(c *http.Client, path string, v any) {
	e.t.Helper()
	res, err := c.Get(e.base + path)
	require.NoError(e.t, err)
	defer res.Body.Close()
	require.Equal(e.t, http.StatusOK, res.StatusCode)
	require.NoError(e.t, json.NewDecoder(res.Body).Decode(v))
}

func (e *oauthEnv) session(c *http.Client) map[string]any {
	e.t.Helper()
	var s map[string]any
	e.getJSON(c, "/session", &s)
	return s
}

// post sends a form; redirects are followed per the client's policy.
func (e *oauthEnv) post(c *http.Client, path string, form url.Values) *http.Response {
	e.t.Helper()
	res, err := c.PostForm(e.base+path, form)
	require.NoError(e.t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// signIn runs the whole browser flow and returns the final response (the
// redirect to the callback URL, or to an error page).
func (e *oauthEnv) signIn(c *http.Client, callbackURL string) *http.Response {
	e.t.Helper()
	tok := e.csrf(c)
	return e.post(c, "/signin/idp", url.Values{"csrfToken": {tok}, "callbackUrl": {callbackURL}})
}

// noRedirects returns a copy of c that stops at the first redirect.
func noRedirects(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cp
}

func userEmail(s map[string]any) string {
	u, _ := s["user"].(map[string]any)
	v, _ := u["email"].(string)
	return v
}

func jsonDecode(res *http.Response, v any) error { return json.NewDecoder(res.Body).Decode(v) }
