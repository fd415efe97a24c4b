package app_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// BenchmarkOpenIDEndpoints measures, through the real handler in process,
// the provider's endpoints that bench:http loads: userinfo (a bearer access
// token) and introspection (client_secret_basic), SQLite. For profiles and
// allocations; bench:http has their share of bare over HTTP.
func BenchmarkOpenIDEndpoints(b *testing.B) {
	e := startEnv(b, envOpts{
		ownURL: true, smtp: &smtptest.Options{},
		clock: &testClock{now: time.Now().UTC().Truncate(time.Second)},
		email: func(p *config.Provider) { p.RateLimit.Disabled = true },
		config: func(c *config.Config) {
			c.OpenID.Enabled = true
			c.OpenID.Clients = opClients()
		},
	})
	c := e.signedIn("ada@example.com")
	r := e.relyingParty("tool", rpSecret)
	res, a := r.authorize(c)
	tok, _, err := r.exchange(r.codeFrom(res, a), a)
	if err != nil {
		b.Fatal(err)
	}
	h := e.app.Handler()
	run := func(b *testing.B, newReq func() *http.Request, ok func(*httptest.ResponseRecorder) bool) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newReq())
		if !ok(rec) {
			b.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			h.ServeHTTP(httptest.NewRecorder(), newReq())
		}
	}
	b.Run("userinfo", func(b *testing.B) {
		run(b, func() *http.Request {
			req := httptest.NewRequest(http.MethodGet, e.path+"/oidc/userinfo", nil)
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			return req
		}, func(rec *httptest.ResponseRecorder) bool {
			return rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), `"ada@example.com"`)
		})
	})
	b.Run("introspect", func(b *testing.B) {
		body := url.Values{"token": {tok.AccessToken}}.Encode()
		run(b, func() *http.Request {
			req := httptest.NewRequest(http.MethodPost, e.path+"/oidc/introspect", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth("tool", rpSecret)
			return req
		}, func(rec *httptest.ResponseRecorder) bool {
			return rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), `"active":true`)
		})
	})
}
