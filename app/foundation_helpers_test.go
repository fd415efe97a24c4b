package app_test

// Helpers for the foundation tests: boot the real app on a fresh SQLite
// database in t.TempDir(), talk to it over real HTTP with a cookie jar, and
// inspect Set-Cookie headers and database rows. Every name here starts with
// "fnd" so it cannot collide with other test files of package app_test.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// fndSecret is the test secret; CSRF hashes are recomputed with it independently.
const fndSecret = "foundation-test-secret-0123456789abcdef"

// fndEnv is one booted app with an HTTP client that keeps cookies like a browser.
type fndEnv struct {
	t      testing.TB
	cfg    config.Config
	app    *app.App
	srv    *httptest.Server
	client *http.Client // cookie jar, does not follow redirects
	base   string       // absolute base URL as configured (SERVICE_URL)
	path   string       // base path, e.g. /api/auth
	origin string       // configured origin, e.g. http://localhost:3000
}

// fndConfig is a valid config on a fresh data folder.
func fndConfig(t testing.TB) config.Config {
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Secret = fndSecret
	cfg.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail}}
	return cfg
}

// fndStart boots the app from cfg (after mutate) behind httptest.NewServer.
func fndStart(t testing.TB, mutate func(*config.Config)) *fndEnv {
	t.Helper()
	cfg := fndConfig(t)
	if mutate != nil {
		mutate(&cfg)
	}
	return fndStartConfig(t, cfg, app.Options{})
}

func fndStartConfig(t testing.TB, cfg config.Config, opts app.Options) *fndEnv {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a, err := app.New(cfg, opts)
	require.NoError(t, err)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = a.Close()
	})
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	b := a.Base()
	return &fndEnv{
		t:   t,
		cfg: cfg,
		app: a,
		srv: srv,
		client: &http.Client{
			Jar:           jar,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       30 * time.Second,
		},
		base:   b.URL(""),
		path:   b.Path,
		origin: b.Origin,
	}
}

// url is the test server's URL for a path below the base path.
func (e *fndEnv) url(sub string) string { return e.srv.URL + e.path + sub }

// fndResp is a fully read response.
type fndResp struct {
	*http.Response
	body string
}

func (r fndResp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.body), &m), "body: %s", r.body)
	return m
}

// do sends a request through the jar-keeping client and reads the body.
func (e *fndEnv) do(req *http.Request) fndResp {
	e.t.Helper()
	res, err := e.client.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return fndResp{res, string(b)}
}

func (e *fndEnv) get(sub string) fndResp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url(sub), nil)
	require.NoError(e.t, err)
	return e.do(req)
}

// postForm posts url-encoded form values below the base path.
func (e *fndEnv) postForm(sub string, form url.Values, headers ...string) fndResp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url(sub), strings.NewReader(form.Encode()))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.do(req)
}

// csrfToken fetches GET /csrf (setting the cookie in the jar) and returns the token.
func (e *fndEnv) csrfToken() string {
	e.t.Helper()
	res := e.get("/csrf")
	require.Equal(e.t, http.StatusOK, res.StatusCode)
	tok, _ := res.json(e.t)["csrfToken"].(string)
	require.Len(e.t, tok, 64)
	return tok
}

// jarCookie returns the jar's value for a cookie name on the test server.
func (e *fndEnv) jarCookie(name string) (string, bool) {
	u, _ := url.Parse(e.srv.URL + "/")
	for _, c := range e.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value, true
		}
	}
	return "", false
}

// setJarCookie puts a raw cookie into the jar for the test server.
func (e *fndEnv) setJarCookie(name, value string) {
	u, _ := url.Parse(e.srv.URL + "/")
	e.client.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

// rawGet sends a request without the jar, with a literal Cookie header.
func (e *fndEnv) rawDo(method, sub, cookieHeader string, body io.Reader, headers ...string) fndResp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url(sub), body)
	require.NoError(e.t, err)
	if cookieHeader != "" {
		req.Header.Set("Cookie", cookieHeader)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := (&http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}).Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return fndResp{res, string(b)}
}

// fndSetCookie is one parsed Set-Cookie header, with its raw text.
type fndSetCookie struct {
	*http.Cookie
	raw string
}

// setCookies parses every Set-Cookie header of a response.
func fndSetCookies(h http.Header) []fndSetCookie {
	var out []fndSetCookie
	for _, line := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			continue
		}
		out = append(out, fndSetCookie{c, line})
	}
	return out
}

// fndFindCookie returns the Set-Cookie for name, if any.
func fndFindCookie(h http.Header, name string) (fndSetCookie, bool) {
	for _, c := range fndSetCookies(h) {
		if c.Name == name {
			return c, true
		}
	}
	return fndSetCookie{}, false
}

// fndRawValue is the cookie value exactly as sent on the wire (before any decoding).
func fndRawValue(line string) string {
	nv, _, _ := strings.Cut(line, ";")
	_, v, _ := strings.Cut(nv, "=")
	return v
}

// fndCSRFHash is next-auth's sha256(token + secret) in hex, computed here
// independently of app/csrf.
func fndCSRFHash(token, secret string) string {
	sum := sha256.Sum256([]byte(token + secret))
	return hex.EncodeToString(sum[:])
}

var fndHex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// fndCounts counts the rows of every table.
func fndCounts(t testing.TB, s *models.Store) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, table := range []string{"users", "accounts", "sessions", "verification_tokens"} {
		var n int64
		require.NoError(t, s.DB().Table(table).Count(&n).Error)
		out[table] = n
	}
	return out
}

// fndUser inserts a user row.
func fndUser(t testing.TB, s *models.Store, name, email, image string) *models.User {
	t.Helper()
	str := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	u := &models.User{ID: models.NewID(), Name: str(name), Email: str(email), Image: str(image)}
	require.NoError(t, s.DB().Create(u).Error)
	return u
}

// fndDBSession inserts a database session for u through the store and
// returns the cookie token.
func fndDBSession(t testing.TB, s *models.Store, u *models.User, expires time.Time) string {
	t.Helper()
	tok := models.NewID()
	require.NoError(t, s.CreateSession(context.Background(), u.ID, session.HashToken(tok), expires))
	return tok
}

// fndSameOrigin reports whether raw is an absolute URL on origin.
func fndSameOrigin(raw, origin string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil {
		return false
	}
	return strings.EqualFold(u.Scheme+"://"+u.Host, origin)
}
