package app_test

// Helpers for the e-mail sign-in tests: the real app on a fresh SQLite file
// behind httptest, a real SMTP server (smtptest, go-smtp) on loopback, a
// settable clock, captured logs, and browser-like clients with cookie jars
// that do the CSRF dance. Every name here starts with "mail" so it cannot
// collide with other test files of package app_test.

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/models"
)

const mailSecret = "mail-test-secret-0123456789abcdef0123456789"

// mailOpts shape one test app.
type mailOpts struct {
	strategy string                        // config.StrategyDatabase (default) or StrategyJWT
	provider func(*config.Provider)        // changes to the e-mail provider
	config   func(*config.Config)          // changes to the whole config
	smtp     smtptest.Options              // the SMTP server's behaviour
	server   func(*smtptest.Server) string // the provider's server URL; nil: plain smtp://
	hooks    *app.Hooks
}

// mailEnv is one booted app, its SMTP server, clock and log.
type mailEnv struct {
	t      *testing.T
	app    *app.App
	srv    *httptest.Server
	smtp   *smtptest.Server
	clock  *mailClock
	logs   *mailLog
	base   string // absolute base URL, the test server's own
	origin string
}

func mailStart(t *testing.T, o mailOpts) *mailEnv {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	origin := "http://" + srv.Listener.Addr().String()
	smtpSrv := smtptest.Start(t, o.smtp)

	cfg := config.Defaults()
	cfg.ServiceURL = origin + "/api/auth"
	cfg.DataDir = t.TempDir()
	cfg.Secret = mailSecret
	cfg.Callbacks.ExposeUserID = true
	if o.strategy != "" {
		cfg.Session.Strategy = o.strategy
	}
	p := config.Provider{ID: "email", Type: config.TypeEmail, From: "Sign in <no-reply@example.com>", Server: smtpSrv.URL("smtp", "")}
	if o.server != nil {
		p.Server = o.server(smtpSrv)
	}
	if o.provider != nil {
		o.provider(&p)
	}
	cfg.Providers = []config.Provider{p}
	if o.config != nil {
		o.config(&cfg)
	}

	clock := &mailClock{t: time.Now().UTC().Truncate(time.Second)}
	logs := &mailLog{}
	a, err := app.New(cfg, app.Options{
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    clock.Now,
		Hooks:  o.hooks,
	})
	require.NoError(t, err)
	srv.Config.Handler = a.Handler()
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		_ = a.Close()
	})
	return &mailEnv{t: t, app: a, srv: srv, smtp: smtpSrv, clock: clock, logs: logs,
		base: cfg.ServiceURL, origin: origin}
}

// mailClock is the app's settable clock (app.Options.Now).
type mailClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *mailClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *mailClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// mailLog collects the app's log lines; the server writes from many goroutines.
type mailLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *mailLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *mailLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// browser is a client with its own cookie jar that does not follow redirects.
func (e *mailEnv) browser() *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	return &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// mailResp is a fully read response.
type mailResp struct {
	status int
	header http.Header
	body   string
}

func (r mailResp) location() string { return r.header.Get("Location") }

func (e *mailEnv) do(c *http.Client, req *http.Request) mailResp {
	e.t.Helper()
	res, err := c.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return mailResp{status: res.StatusCode, header: res.Header, body: string(b)}
}

func (e *mailEnv) get(c *http.Client, rawURL string) mailResp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	require.NoError(e.t, err)
	return e.do(c, req)
}

func (e *mailEnv) post(c *http.Client, rawURL string, form url.Values) mailResp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, rawURL, strings.NewReader(form.Encode()))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.do(c, req)
}

// csrf does the first half of the CSRF dance: GET /csrf sets the cookie.
func (e *mailEnv) csrf(c *http.Client) string {
	e.t.Helper()
	res := e.get(c, e.base+"/csrf")
	require.Equal(e.t, http.StatusOK, res.status)
	var body struct{ CSRFToken string }
	require.NoError(e.t, json.Unmarshal([]byte(res.body), &body))
	require.Len(e.t, body.CSRFToken, 64)
	return body.CSRFToken
}

// requestLink is the whole sign-in form: CSRF dance, then POST /signin/email.
// extra may set callbackUrl, json, ...
func (e *mailEnv) requestLink(c *http.Client, address string, extra url.Values) mailResp {
	e.t.Helper()
	form := url.Values{"csrfToken": {e.csrf(c)}, "email": {address}}
	for k, v := range extra {
		form[k] = v
	}
	return e.post(c, e.base+"/signin/email", form)
}

var mailLinkRE = regexp.MustCompile(`https?://\S+/callback/email\?\S+`)

// mail waits for the n-th message (1-based) and parses it.
func (e *mailEnv) mail(n int) (smtptest.Mail, *smtptest.Parsed) {
	e.t.Helper()
	m := e.smtp.Wait(e.t, n)[n-1]
	p, err := smtptest.Parse(m.Data)
	require.NoError(e.t, err)
	return m, p
}

// link is the sign-in link of the n-th message, from its text part.
func (e *mailEnv) link(n int) string {
	e.t.Helper()
	_, p := e.mail(n)
	l := mailLinkRE.FindString(p.Text)
	require.NotEmpty(e.t, l, "no sign-in link in the text part: %q", p.Text)
	return l
}

// signIn requests a link for address and returns it.
func (e *mailEnv) signIn(c *http.Client, address, callbackURL string) string {
	e.t.Helper()
	before := len(e.smtp.Mails())
	res := e.requestLink(c, address, url.Values{"callbackUrl": {callbackURL}})
	require.Equal(e.t, http.StatusFound, res.status, res.body)
	require.Equal(e.t, e.base+"/verify-request?provider=email&type=email", res.location())
	return e.link(before + 1)
}

// session is GET /session's body ({} when signed out).
func (e *mailEnv) session(c *http.Client) map[string]any {
	e.t.Helper()
	res := e.get(c, e.base+"/session")
	require.Equal(e.t, http.StatusOK, res.status)
	var s map[string]any
	require.NoError(e.t, json.Unmarshal([]byte(res.body), &s))
	return s
}

// sessionUser is the session's user.email and user.id ("" when signed out).
func (e *mailEnv) sessionUser(c *http.Client) (addr, id string) {
	u, _ := e.session(c)["user"].(map[string]any)
	addr, _ = u["email"].(string)
	id, _ = u["id"].(string)
	return addr, id
}

// rows counts a table.
func (e *mailEnv) rows(model any) int64 {
	e.t.Helper()
	var n int64
	require.NoError(e.t, e.app.Store().DB().Model(model).Count(&n).Error)
	return n
}

func (e *mailEnv) tokens() int64 { return e.rows(&models.VerificationToken{}) }

// requireError asserts a redirect to {base}/error?error=code.
func (e *mailEnv) requireError(res mailResp, code string) {
	e.t.Helper()
	require.Equal(e.t, http.StatusFound, res.status, "body: %s", res.body)
	require.Equal(e.t, e.base+"/error?error="+code, res.location())
}

// mailQuery is the link's query.
func mailQuery(t *testing.T, link string) url.Values {
	u, err := url.Parse(link)
	require.NoError(t, err)
	return u.Query()
}

// newMailApp builds an app from cfg and closes it again: for tests of New's errors.
func newMailApp(cfg config.Config) (*app.App, error) {
	a, err := app.New(cfg, app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		_ = a.Close()
	}
	return a, err
}
