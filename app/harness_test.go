package app_test

// The one test harness of package app_test: boot the real app on a fresh
// SQLite database in t.TempDir() (or, with envOpts.postgres, a fresh
// PostgreSQL database; several apps may share one: instances_test.go), serve it over real HTTP on loopback, and
// drive it with browser-like clients that keep cookies. Optional parts: an
// OpenID Connect IdP (mockoidc), an SMTP catcher (smtptest), a settable
// clock, operator hooks and captured logs.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// testSecret is the app's secret in every test; hashes are recomputed with
// it independently of the app.
const testSecret = "test-secret-0123456789abcdef0123456789abcdef"

// envOpts shape one test app. The zero value is the plain app: SERVICE_URL
// left at the default (http://localhost:3000/api/auth, so the test server's
// own address is not the configured one), one e-mail provider without a
// server, real time, logs discarded.
type envOpts struct {
	ownURL   bool                            // SERVICE_URL is the test server's own origin + /api/auth
	idp      bool                            // run mockoidc; the providers are one OIDC provider "idp" on it
	idpWrap  func(http.Handler) http.Handler // mockoidc middleware around each of its endpoints (with idp)
	smtp     *smtptest.Options               // run an SMTP catcher; the e-mail provider sends through it (with idp: next to "idp")
	catcher  *smtptest.Server                // with smtp: this running catcher instead of a new one (apps sharing one)
	smtpURL  func(*smtptest.Server) string   // the e-mail provider's server URL; nil: plain smtp:// to the catcher
	email    func(*config.Provider)          // changes to the e-mail provider
	strategy string                          // session strategy; "": the default (database)
	config   func(*config.Config)            // changes to the whole config, applied last
	clock    *testClock                      // app.Options.Now; nil: real time
	hooks    *signin.Hooks                   // app.Options.Hooks
	logs     bool                            // capture the app's logs (debug level) in env.logs
	idpHTTP  *http.Client                    // app.Options.HTTPClient: the client for every call to identity providers
	postgres bool                            // keep the rows in a fresh PostgreSQL database (DATABASE_URL postgres://...), not SQLite
	wrap     func(http.Handler) http.Handler // around the app's handler, inside the test server (benchmarks measure with it)
	hasher   *password.Hasher                // app.Options.PasswordHasher; nil: cheapHasher unless realHasher
	// realHasher hashes passwords at the service's own cost (Argon2id,
	// 19 MiB, 2 passes) where a test is about that cost; the others use
	// cheapHasher: they check rules, and the full cost under -race made
	// the password tests a large part of the suite's cold run.
	realHasher bool
}

// oidc is o with the OAuth setup: the app on its own URL wired to a real
// OpenID Connect server (mockoidc: real discovery, RS256-signed id_tokens,
// PKCE and nonce, single-use codes); mutate adjusts the config.
func (o envOpts) oidc(mutate func(*config.Config), hooks *signin.Hooks) envOpts {
	o.ownURL, o.idp, o.config, o.hooks = true, true, mutate, hooks
	return o
}

// env is one booted app with its server and optional parts.
type env struct {
	t      testing.TB
	cfg    config.Config
	app    *app.App
	srv    *httptest.Server
	idp    *mockoidc.MockOIDC // with envOpts.idp
	smtp   *smtptest.Server   // with envOpts.smtp
	clock  *testClock         // with envOpts.clock
	hasher *password.Hasher   // envOpts.hasher or cheapHasher; nil with envOpts.realHasher
	logs   *logBuffer         // with envOpts.logs
	client *http.Client       // the default browser: browser(), or following(browser()) with an IdP
	base   string             // absolute base URL as configured (SERVICE_URL)
	path   string             // base path, e.g. /api/auth
	origin string             // configured origin, e.g. http://localhost:3000
}

// cheapHasher is an Argon2id of 64 KiB and one pass: the tests' default
// (envOpts.realHasher).
func cheapHasher(t testing.TB) *password.Hasher {
	h, err := password.New(password.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})
	require.NoError(t, err)
	return h
}

// hash is pw hashed as the env's service hashes it.
func (e *env) hash(pw string) string {
	e.t.Helper()
	hash, err := password.Hash(pw)
	if e.hasher != nil {
		hash, err = e.hasher.Hash(pw)
	}
	require.NoError(e.t, err)
	return hash
}

// testConfig is a valid config on a fresh data folder.
func testConfig(t testing.TB) config.Config {
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Secret = testSecret
	// Port 9 (discard) is never contacted by the tests that use this default;
	// a server keeps the config valid under https service URLs.
	cfg.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail, Server: "smtp://127.0.0.1:9"}}
	return cfg
}

// startEnv boots the app as o says and stops it when the test ends.
func startEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	e := &env{t: t, clock: o.clock}
	srv := httptest.NewUnstartedServer(nil)
	cfg := testConfig(t)
	if o.ownURL {
		cfg.ServiceURL = "http://" + srv.Listener.Addr().String() + "/api/auth"
	}
	if o.idp {
		idp, err := mockoidc.NewServer(nil)
		require.NoError(t, err)
		if o.idpWrap != nil {
			require.NoError(t, idp.AddMiddleware(o.idpWrap))
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		require.NoError(t, idp.Start(ln, nil))
		t.Cleanup(func() { _ = idp.Shutdown() })
		e.idp = idp
		cfg.Providers = []config.Provider{{
			ID: "idp", Type: config.TypeOIDC, Name: "Test IdP",
			Issuer: idp.Issuer(), ClientID: idp.Config().ClientID, ClientSecret: idp.Config().ClientSecret,
		}}
	}
	if o.smtp != nil {
		e.smtp = o.catcher
		if e.smtp == nil {
			e.smtp = smtptest.Start(t, *o.smtp)
		}
		p := config.Provider{ID: "email", Type: config.TypeEmail, From: "Sign in <no-reply@example.com>", Server: e.smtp.URL("smtp", "")}
		if o.smtpURL != nil {
			p.Server = o.smtpURL(e.smtp)
		}
		if o.idp { // both: the IdP's provider and the e-mail one
			cfg.Providers = append(cfg.Providers, p)
		} else {
			cfg.Providers = []config.Provider{p}
		}
	}
	if o.email != nil {
		for i := range cfg.Providers {
			if cfg.Providers[i].Type == config.TypeEmail {
				o.email(&cfg.Providers[i])
			}
		}
	}
	if o.strategy != "" {
		cfg.Session.Strategy = o.strategy
	}
	if o.postgres {
		cfg.DatabaseURL = migrated.NewDatabase(t, postgres.URL(t))
	}
	if o.config != nil {
		o.config(&cfg)
	}
	_, err := cfg.Validate(app.CatalogueExtra)
	require.NoError(t, err)

	if o.hasher == nil && !o.realHasher {
		o.hasher = cheapHasher(t)
	}
	e.hasher = o.hasher
	opts := app.Options{Logger: slog.New(slog.DiscardHandler), Hooks: o.hooks, HTTPClient: o.idpHTTP, PasswordHasher: o.hasher}
	if cfg.I18n.Default == "" && len(cfg.I18n.Languages) == 0 {
		opts.Langs = langs(t) // the shipped catalogue, read once per test binary
	}
	if o.clock != nil {
		opts.Now = o.clock.Now
	}
	if o.logs {
		e.logs = &logBuffer{}
		opts.Logger = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a, err := app.New(cfg, opts)
	require.NoError(t, err)
	if o.postgres {
		require.Equal(t, models.DialectPostgres, a.Store().Dialect(), "DATABASE_URL %s", cfg.RedactedDatabaseURL())
	}
	h := a.Handler()
	if o.wrap != nil {
		h = o.wrap(h)
	}
	srv.Config.Handler = oneCookiePerName(t, h)
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		_ = a.Close()
	})
	b := a.Base()
	e.cfg, e.app, e.srv = cfg, a, srv
	e.base, e.path, e.origin = b.URL(""), b.Path, b.Origin
	e.client = e.browser()
	if e.idp != nil {
		e.client = e.following(e.client)
	}
	return e
}

// startMail is the e-mail sign-in setup: the app on its own URL with a real
// SMTP server, a settable clock, captured logs and user.id in the session.
func startMail(t testing.TB, o envOpts) *env {
	t.Helper()
	o.ownURL, o.logs = true, true
	if o.smtp == nil {
		o.smtp = &smtptest.Options{}
	}
	if o.clock == nil {
		o.clock = &testClock{now: time.Now().UTC().Truncate(time.Second)}
	}
	mutate := o.config
	o.config = func(c *config.Config) {
		c.Callbacks.ExposeUserID = true
		if mutate != nil {
			mutate(c)
		}
	}
	return startEnv(t, o)
}

// startOIDC is the OAuth setup (envOpts.oidc) on SQLite.
func startOIDC(t testing.TB, mutate func(*config.Config), hooks *signin.Hooks) *env {
	t.Helper()
	return startEnv(t, envOpts{}.oidc(mutate, hooks))
}

// buildApp builds an app from cfg and closes it again: for tests of New's errors.
func buildApp(cfg config.Config) (*app.App, error) {
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		_ = a.Close()
	}
	return a, err
}

func strategies() []string { return []string{config.StrategyDatabase, config.StrategyJWT} }

// backend is where a test app keeps sessions: a strategy and the database
// under it.
type backend struct {
	name     string
	strategy string
	postgres bool
}

// backends are strategies() on SQLite plus the database strategy on
// PostgreSQL (jwt sessions touch the database only for users and accounts,
// which the PostgreSQL runs of the OAuth and e-mail flows cover).
func backends() []backend {
	return []backend{
		{config.StrategyDatabase, config.StrategyDatabase, false},
		{config.StrategyJWT, config.StrategyJWT, false},
		{"database-postgres", config.StrategyDatabase, true},
	}
}

// opts is o on this backend.
func (b backend) opts(o envOpts) envOpts {
	o.strategy, o.postgres = b.strategy, b.postgres
	return o
}

// eachDatabase runs f as the subtests "sqlite" and "postgres", telling it
// whether to ask for PostgreSQL (envOpts.postgres).
func eachDatabase(t *testing.T, f func(t *testing.T, postgres bool)) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { f(t, pg) })
	}
}

// testClock is the app's settable clock (app.Options.Now).
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// logBuffer collects the app's log lines; the server writes from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// ---- browsers ----

func stopAtRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// browser is a new client with its own cookie jar, like a fresh browser. It
// stops at the first redirect.
func (e *env) browser() *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: stopAtRedirect}
}

// following returns a copy of c (same jar) that follows redirects within
// latchkey and the IdP and stops at the first hop outside them (the app's page).
func (e *env) following(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		u := req.URL.String()
		if strings.HasPrefix(u, e.base) || (e.idp != nil && strings.HasPrefix(u, e.idp.Issuer())) {
			return nil
		}
		return http.ErrUseLastResponse
	}
	return &cp
}

// noRedirects returns a copy of c (same jar) that stops at the first redirect.
func noRedirects(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = stopAtRedirect
	return &cp
}

// jarCookie returns c's value for a cookie name the browser would send to
// the base path on the test server (cookies of Path=/ and of the base path).
func (e *env) jarCookie(c *http.Client, name string) (string, bool) {
	u, _ := url.Parse(e.srv.URL + e.path + "/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value, true
		}
	}
	return "", false
}

// setJarCookie puts a raw cookie into c's jar for the test server; an empty
// value deletes it.
func (e *env) setJarCookie(c *http.Client, name, value string) {
	e.setJarCookieAt(c, name, value, "/")
}

// setJarCookieAt is setJarCookie for a cookie of the given Path.
func (e *env) setJarCookieAt(c *http.Client, name, value, path string) {
	u, _ := url.Parse(e.srv.URL + path)
	ck := &http.Cookie{Name: name, Value: value, Path: path}
	if value == "" {
		ck.MaxAge = -1
	}
	c.Jar.SetCookies(u, []*http.Cookie{ck})
}

// ---- requests ----

// resp is a fully read response.
type resp struct {
	*http.Response
	body string
}

func (r resp) location() string { return r.Header.Get("Location") }

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.body), &m), "body: %s", r.body)
	return m
}

// url is an absolute URL as is, else the test server's URL for a path below
// the base path.
func (e *env) url(target string) string {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		return target
	}
	return e.srv.URL + e.path + target
}

// do sends a request through c and reads the body.
func (e *env) do(c *http.Client, req *http.Request) resp {
	e.t.Helper()
	res, err := c.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return resp{res, string(b)}
}

// get is GET target (see url) through c.
func (e *env) get(c *http.Client, target string) resp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url(target), nil)
	require.NoError(e.t, err)
	return e.do(c, req)
}

// post sends url-encoded form values to target (see url) through c, with
// extra headers as name, value pairs.
func (e *env) post(c *http.Client, target string, form url.Values, headers ...string) resp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url(target), strings.NewReader(form.Encode()))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.do(c, req)
}

// rawDo sends a request without any jar, with a literal Cookie header, and
// stops at the first redirect.
func (e *env) rawDo(method, target, cookieHeader string, body io.Reader, headers ...string) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url(target), body)
	require.NoError(e.t, err)
	if cookieHeader != "" {
		req.Header.Set("Cookie", cookieHeader)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.do(&http.Client{CheckRedirect: stopAtRedirect, Timeout: 30 * time.Second}, req)
}

// csrf does the first half of the CSRF dance: GET /csrf sets the cookie in
// c's jar; the token is returned.
func (e *env) csrf(c *http.Client) string {
	e.t.Helper()
	res := e.get(c, "/csrf")
	require.Equal(e.t, http.StatusOK, res.StatusCode)
	tok, _ := res.json(e.t)["csrfToken"].(string)
	require.Len(e.t, tok, 64)
	return tok
}

// session is GET /session's body ({} when signed out).
func (e *env) session(c *http.Client) map[string]any {
	e.t.Helper()
	res := e.get(c, "/session")
	require.Equal(e.t, http.StatusOK, res.StatusCode)
	var s map[string]any
	require.NoError(e.t, json.Unmarshal([]byte(res.body), &s))
	return s
}

// sessionUser is the session's user.email and user.id ("" when signed out).
func (e *env) sessionUser(c *http.Client) (addr, id string) {
	u, _ := e.session(c)["user"].(map[string]any)
	addr, _ = u["email"].(string)
	id, _ = u["id"].(string)
	return addr, id
}

// userEmail is a session's user.email.
func userEmail(s map[string]any) string {
	u, _ := s["user"].(map[string]any)
	v, _ := u["email"].(string)
	return v
}

// signIn is a sign-in form: CSRF dance, then POST /signin/{provider} with
// the callback URL; c's redirect policy decides how far it goes.
func (e *env) signIn(c *http.Client, provider, callbackURL string) resp {
	e.t.Helper()
	tok := e.csrf(c)
	return e.post(c, "/signin/"+provider, url.Values{"csrfToken": {tok}, "callbackUrl": {callbackURL}})
}

// requireError asserts a redirect to {base}/error?error=code.
func (e *env) requireError(res resp, code string) {
	e.t.Helper()
	require.Equal(e.t, http.StatusFound, res.StatusCode, "body: %s", res.body)
	require.Equal(e.t, e.base+"/error?error="+code, res.location())
}

// ---- e-mail ----

// requestLink is the whole e-mail sign-in form: CSRF dance, then POST
// /signin/email. extra may set callbackUrl, json, ...
func (e *env) requestLink(c *http.Client, address string, extra url.Values) resp {
	e.t.Helper()
	form := url.Values{"csrfToken": {e.csrf(c)}, "email": {address}}
	for k, v := range extra {
		form[k] = v
	}
	return e.post(c, "/signin/email", form)
}

var linkRE = regexp.MustCompile(`https?://\S+/callback/email\?\S+`)

// mail waits for the n-th message (1-based) at the SMTP catcher and parses it.
func (e *env) mail(n int) (smtptest.Mail, *smtptest.Parsed) {
	e.t.Helper()
	m := e.smtp.Wait(e.t, n)[n-1]
	p, err := smtptest.Parse(m.Data)
	require.NoError(e.t, err)
	return m, p
}

// link is the sign-in link of the n-th message, from its text part.
func (e *env) link(n int) string {
	e.t.Helper()
	_, p := e.mail(n)
	l := linkRE.FindString(p.Text)
	require.NotEmpty(e.t, l, "no sign-in link in the text part: %q", p.Text)
	return l
}

// emailLink requests a sign-in link for address and returns it.
func (e *env) emailLink(c *http.Client, address, callbackURL string) string {
	e.t.Helper()
	before := len(e.smtp.Mails())
	res := e.requestLink(c, address, url.Values{"callbackUrl": {callbackURL}})
	require.Equal(e.t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(e.t, e.base+"/verify-request?provider=email&type=email", res.location())
	return e.link(before + 1)
}

// linkQuery is a link's query.
func linkQuery(t testing.TB, link string) url.Values {
	u, err := url.Parse(link)
	require.NoError(t, err)
	return u.Query()
}

// ---- database ----

// counts counts the rows of every table.
func (e *env) counts() models.Counts {
	e.t.Helper()
	c, err := e.app.Store().Count(context.Background())
	require.NoError(e.t, err)
	return c
}

func (e *env) tokens() int64 { return e.counts().VerificationTokens }

// onlyUser is the one user in the database.
func (e *env) onlyUser() models.User {
	e.t.Helper()
	users, err := e.app.Store().ListUsers(context.Background(), 2)
	require.NoError(e.t, err)
	require.Len(e.t, users, 1)
	return users[0]
}

// onlyAccount is the one provider account of the one user.
func (e *env) onlyAccount() models.Account {
	e.t.Helper()
	accs, err := e.app.Store().AccountsOf(context.Background(), e.onlyUser().ID)
	require.NoError(e.t, err)
	require.Len(e.t, accs, 1)
	return accs[0]
}

// addUser inserts a user row; empty strings are NULL.
func (e *env) addUser(name, email, image string) *models.User {
	e.t.Helper()
	str := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	u := &models.User{ID: models.NewID(), Name: str(name), Email: str(email), Image: str(image)}
	require.NoError(e.t, e.app.Store().CreateUser(context.Background(), u))
	return u
}

// addDBSession inserts a database session for u, signed in now (the env's
// clock, else real time), through the store and returns the cookie token.
func (e *env) addDBSession(u *models.User, expires time.Time) string {
	e.t.Helper()
	signedIn := time.Now()
	if e.clock != nil {
		signedIn = e.clock.Now()
	}
	tok := models.NewID()
	require.NoError(e.t, e.app.Store().CreateSession(context.Background(), models.NewSession{UserID: u.ID, TokenHash: session.HashToken(tok), SignedIn: signedIn, Expires: expires}))
	return tok
}

// jwtCookie makes a v4 session JWT the way the jwt strategy does.
func jwtCookie(t testing.TB, claims map[string]any, now time.Time) string {
	t.Helper()
	key, err := jwt.NewKey(testSecret, "", jwt.V4)
	require.NoError(t, err)
	tok, err := key.Encode(claims, 30*24*time.Hour, now)
	require.NoError(t, err)
	return tok
}

// ---- cookies and URLs ----

// setCookie is one parsed Set-Cookie header, with its raw text.
type setCookie struct {
	*http.Cookie
	raw string
}

// setCookies parses every Set-Cookie header of a response.
func setCookies(h http.Header) []setCookie {
	var out []setCookie
	for _, line := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			continue
		}
		out = append(out, setCookie{c, line})
	}
	return out
}

// findCookie returns the Set-Cookie for name, if any.
func findCookie(h http.Header, name string) (setCookie, bool) {
	for _, c := range setCookies(h) {
		if c.Name == name {
			return c, true
		}
	}
	return setCookie{}, false
}

// rawValue is the cookie value exactly as sent on the wire (before any decoding).
func rawValue(line string) string {
	nv, _, _ := strings.Cut(line, ";")
	_, v, _ := strings.Cut(nv, "=")
	return v
}

// csrfHash is next-auth's sha256(token + secret) in hex, computed here
// independently of app/csrf.
func csrfHash(token, secret string) string {
	sum := sha256.Sum256([]byte(token + secret))
	return hex.EncodeToString(sum[:])
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// sameOrigin reports whether raw is an absolute URL on origin.
func sameOrigin(raw, origin string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil {
		return false
	}
	return strings.EqualFold(u.Scheme+"://"+u.Host, origin)
}

// oneCookiePerName fails the test when any response — including the
// intermediate hops of a redirect chain the client follows — sets the same
// cookie twice: browsers keep only one, and which one is unspecified. A
// name set with and without a Domain is two cookies (cookies.domain).
func oneCookiePerName(t testing.TB, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		seen := map[string]bool{}
		for _, line := range w.Header().Values("Set-Cookie") {
			name, _, _ := strings.Cut(line, "=")
			if c, err := http.ParseSetCookie(line); err == nil && c.Domain != "" {
				name += "; Domain=" + c.Domain
			}
			if seen[name] {
				t.Errorf("%s %s: cookie %s is set twice in one response", r.Method, r.URL.Path, name)
			}
			seen[name] = true
		}
	})
}
