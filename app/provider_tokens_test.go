package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/client"
	"github.com/latchkey-auth/latchkey/test/refreshidp"
)

// clientSecret is tokens.client_secret in these tests: the app's backend
// sends it as a bearer token.
const clientSecret = "tokens-client-secret-0123456789abcdef"

// tokenEnv is an app whose OIDC provider "idp" keeps its tokens, on a
// real IdP that rotates refresh tokens (test/refreshidp), with a settable
// clock; the default browser is signed in with the IdP.
type tokenEnv struct {
	*env
	idp *refreshidp.IdP
}

func startTokens(t testing.TB, pg bool, mutate func(*config.Config)) *tokenEnv {
	t.Helper()
	idp := refreshidp.New(time.Hour)
	o := envOpts{postgres: pg, clock: &testClock{now: time.Now()}, idpWrap: idp.Middleware, logs: true}.oidc(func(c *config.Config) {
		c.Providers[0].StoreTokens = true
		c.Providers = append(c.Providers, config.Provider{ID: "email", Type: config.TypeEmail, Server: "smtp://127.0.0.1:9"})
		c.Tokens.ClientSecret = clientSecret
		if mutate != nil {
			mutate(c)
		}
	}, nil)
	e := &tokenEnv{env: startEnv(t, o), idp: idp}
	e.signIn(e.client, "idp", "/home")
	require.NotEmpty(t, userEmail(e.session(e.client)), "signed in")
	return e
}

// token is GET /token/:provider through c with extra headers (name, value
// pairs); "bearer" as the only header sends the client secret.
func (e *tokenEnv) token(c *http.Client, provider string, headers ...string) resp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url("/token/"+provider), nil)
	require.NoError(e.t, err)
	if len(headers) == 1 && headers[0] == "bearer" {
		headers = []string{"Authorization", "Bearer " + clientSecret}
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.do(c, req)
}

func (e *tokenEnv) accessToken() string {
	e.t.Helper()
	r := e.token(e.client, "idp", "bearer")
	require.Equal(e.t, http.StatusOK, r.StatusCode, r.body)
	require.Contains(e.t, r.Header.Get("Cache-Control"), "no-store")
	at, _ := r.json(e.t)["access_token"].(string)
	require.NotEmpty(e.t, at)
	return at
}

// requireNoPlaintext: no token is in the database in the clear — the
// SQLite file and its WAL byte for byte, or every PostgreSQL accounts row
// as text.
func (e *tokenEnv) requireNoPlaintext(tokens ...string) {
	e.t.Helper()
	tokens = append(tokens, e.idp.Secrets()...)
	var hay string
	if e.cfg.IsPostgres() {
		var rows []string
		require.NoError(e.t, e.app.Store().DB().Raw("SELECT CAST(a AS text) FROM accounts a").Scan(&rows).Error)
		require.NotEmpty(e.t, rows)
		hay = strings.Join(rows, "\n")
	} else {
		path := e.cfg.DatabasePath()
		for _, f := range []string{path, path + "-wal"} {
			b, err := os.ReadFile(f)
			if err == nil {
				hay += string(b)
			}
		}
		require.NotEmpty(e.t, hay)
	}
	for _, tok := range tokens {
		require.NotContains(e.t, hay, tok)
	}
	require.Contains(e.t, hay, "lk1:", "the sealed tokens are there")
}

func TestProviderTokens(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startTokens(t, pg, nil)

		// Fresh: handed out as kept, no call to the provider.
		first := e.accessToken()
		r := e.token(e.client, "idp", "bearer")
		body := r.json(t)
		require.Equal(t, first, body["access_token"])
		require.Equal(t, "bearer", strings.ToLower(body["token_type"].(string)))
		require.InDelta(t, float64(time.Now().Add(time.Hour).Unix()), body["expires_at"], 120)
		require.Zero(t, e.idp.Refreshes())
		e.requireNoPlaintext(first)

		// Expired: 50 at once cause one refresh; all get its token.
		e.clock.Add(2 * time.Hour)
		e.idp.SetDelay(200 * time.Millisecond)
		got := make([]string, 50)
		start := time.Now()
		var wg sync.WaitGroup
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = e.accessToken()
			}()
		}
		wg.Wait()
		t.Logf("50 concurrent GET /token/idp, the IdP answering its refresh in 200 ms: all answered in %s", time.Since(start).Round(time.Millisecond))
		// One that comes after the refresh (as any of the 50 may, on a
		// busy machine) gets the refreshed token, fresh by the service's
		// clock: its expiry was stamped by another clock once, and the
		// next request refreshed again.
		got = append(got, e.accessToken())
		require.EqualValues(t, 1, e.idp.Refreshes())
		issued := e.idp.Issued()
		for _, g := range got {
			require.Equal(t, issued[0], g)
		}
		// Saved with the rotated refresh token: the next expiry refreshes
		// with it (a spent one would be invalid_grant).
		e.clock.Add(2 * time.Hour)
		next := e.accessToken()
		require.Equal(t, e.idp.Issued()[1], next)
		require.EqualValues(t, 2, e.idp.Refreshes())
		e.requireNoPlaintext(first)
		require.NotContains(t, e.logs.String(), issued[0], "never in the logs")
	})
}

func TestProviderTokenRefusals(t *testing.T) {
	e := startTokens(t, false, nil)
	requireCode := func(r resp, status int, code string) {
		t.Helper()
		require.Equal(t, status, r.StatusCode, r.body)
		require.Equal(t, code, r.json(t)["error"])
	}
	// Browsers: a refused origin, with or without the secret.
	requireCode(e.token(e.client, "idp", "Origin", "https://evil.example"), http.StatusForbidden, "AccessDenied")
	requireCode(e.token(e.client, "idp", "Origin", "https://evil.example", "Authorization", "Bearer "+clientSecret), http.StatusForbidden, "AccessDenied")
	// Neither the secret nor a trusted proxy; a wrong secret.
	requireCode(e.token(e.client, "idp"), http.StatusForbidden, "AccessDenied")
	requireCode(e.token(e.client, "idp", "Authorization", "Bearer wrong"), http.StatusForbidden, "AccessDenied")
	// The app's own origin with the secret is the backend.
	require.Equal(t, http.StatusOK, e.token(e.client, "idp", "Origin", e.origin, "Authorization", "Bearer "+clientSecret).StatusCode)
	// Signed out.
	requireCode(e.token(e.browser(), "idp", "bearer"), http.StatusUnauthorized, "SessionRequired")
	// A provider without store_tokens, and one that does not exist.
	requireCode(e.token(e.client, "email", "bearer"), http.StatusNotFound, "TokensNotStored")
	requireCode(e.token(e.client, "nope", "bearer"), http.StatusNotFound, "TokensNotStored")

	t.Run("a trusted proxy's peer needs no secret", func(t *testing.T) {
		e := startTokens(t, false, func(c *config.Config) {
			c.Tokens.ClientSecret = ""
			c.TrustedProxies = []string{"127.0.0.1/32"}
		})
		require.Equal(t, http.StatusOK, e.token(e.client, "idp").StatusCode)
		requireCode(e.token(e.client, "idp", "Authorization", "Bearer "+clientSecret), http.StatusForbidden, "AccessDenied")
		// Behind an ingress listed in trusted_proxies every browser's
		// request comes from a trusted peer: a same-origin fetch (no
		// Origin header) by a script on the app's origin got the token.
		// A request the proxy forwarded, or a browser's, is no backend.
		for name, headers := range map[string][]string{
			"same-origin fetch": {"Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "cors"},
			"forwarded for":     {"X-Forwarded-For", "203.0.113.7"},
			"forwarded":         {"Forwarded", "for=203.0.113.7"},
			"real ip":           {"X-Real-IP", "203.0.113.7"},
			"navigation":        {"Sec-Fetch-Mode", "navigate"},
		} {
			r := e.token(e.client, "idp", headers...)
			require.Equal(t, http.StatusForbidden, r.StatusCode, "%s: %s", name, r.body)
			require.Equal(t, "AccessDenied", r.json(t)["error"], name)
		}
	})
}

// A refresh token the provider revoked: the documented error, the account
// marked, GET /session tells the client, and a new sign-in clears it.
func TestProviderTokenRevoked(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startTokens(t, pg, nil)
		e.idp.Revoke()
		e.clock.Add(2 * time.Hour)
		r := e.token(e.client, "idp", "bearer")
		require.Equal(t, http.StatusUnauthorized, r.StatusCode, r.body)
		require.Equal(t, "RefreshAccessTokenError", r.json(t)["error"])
		require.EqualValues(t, 1, e.idp.Refreshes())
		var mark *string
		require.NoError(t, e.app.Store().DB().Raw("SELECT token_error FROM accounts").Scan(&mark).Error)
		require.NotNil(t, mark)
		require.Equal(t, "RefreshAccessTokenError", *mark)
		require.Equal(t, "RefreshAccessTokenError", e.session(e.client)["error"])
		// Marked: no more calls to the provider.
		require.Equal(t, http.StatusUnauthorized, e.token(e.client, "idp", "bearer").StatusCode)
		require.EqualValues(t, 1, e.idp.Refreshes())

		e.signIn(e.client, "idp", "/home")
		require.NotContains(t, e.session(e.client), "error")
		// The new sign-in's tokens, once expired: its refresh token works.
		e.clock.Add(2 * time.Hour)
		renewed := e.accessToken()
		require.Equal(t, e.idp.Issued()[0], renewed)
		require.EqualValues(t, 2, e.idp.Refreshes())
	})
}

// Without store_tokens no token of the provider is kept, and GET /session
// reads nothing more.
func TestProviderTokensOff(t *testing.T) {
	e := startTokens(t, false, func(c *config.Config) { c.Providers[0].StoreTokens = false })
	var n int64
	require.NoError(t, e.app.Store().DB().Raw("SELECT COUNT(*) FROM accounts WHERE access_token IS NOT NULL OR refresh_token IS NOT NULL OR id_token IS NOT NULL").Scan(&n).Error)
	require.Zero(t, n)
	r := e.token(e.client, "idp", "bearer")
	require.Equal(t, http.StatusNotFound, r.StatusCode)
	require.Equal(t, "TokensNotStored", r.json(t)["error"])
}

// The Go client's AccessToken against the real endpoint: the token, and
// each documented refusal as its error.
func TestProviderTokenGoClient(t *testing.T) {
	e := startTokens(t, false, nil)
	rm, err := client.NewRemote(client.RemoteOptions{URL: e.srv.URL + e.path, TokenSecret: clientSecret})
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodGet, "/app", nil)
	for _, ck := range e.client.Jar.Cookies(mustParse(t, e.url("/token/idp"))) {
		r.AddCookie(ck)
	}
	ctx := context.Background()
	tok, err := rm.AccessToken(ctx, r, "idp")
	require.NoError(t, err)
	require.Equal(t, e.accessToken(), tok.AccessToken)
	require.WithinDuration(t, time.Now().Add(time.Hour), tok.ExpiresAt, 2*time.Minute)

	_, err = rm.AccessToken(ctx, r, "email")
	require.ErrorIs(t, err, client.ErrTokensNotStored)
	_, err = rm.AccessToken(ctx, httptest.NewRequest(http.MethodGet, "/app", nil), "idp")
	require.ErrorIs(t, err, client.ErrSignedOut)
	noSecret, err := client.NewRemote(client.RemoteOptions{URL: e.srv.URL + e.path})
	require.NoError(t, err)
	_, err = noSecret.AccessToken(ctx, r, "idp")
	require.ErrorContains(t, err, "403 AccessDenied")

	e.idp.Revoke()
	e.clock.Add(2 * time.Hour)
	_, err = rm.AccessToken(ctx, r, "idp")
	require.ErrorIs(t, err, client.ErrSignInAgain)
}

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}
