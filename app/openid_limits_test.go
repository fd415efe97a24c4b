package app_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// The provider's endpoints read no more than max_body_bytes (413 past it,
// as every route), and an authorization request stores no parameter
// longer than a client needs: an oversized state is a 400 that does not
// echo it, an oversized nonce, login_hint or code_challenge the client's
// invalid_request. Nothing is stored either way.
func TestOpenIDRequestSizeLimits(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startOP(t, b, nil)
			app := e.relyingParty("app", rpSecret)
			before, requests := e.counts(), e.authRequests()
			limit := int(e.cfg.MaxBodyBytes)

			target, _ := app.authorizeURL()
			u, err := url.Parse(target)
			require.NoError(t, err)
			pad := func(form string, size int) string {
				form += "&pad="
				return form + strings.Repeat("a", size-len(form))
			}
			for _, ep := range []string{"authorization_endpoint", "token_endpoint", "revocation_endpoint", "introspection_endpoint", "userinfo_endpoint", "end_session_endpoint"} {
				form := "client_id=app&client_secret=" + rpSecret + "&grant_type=authorization_code&code=x&token=x"
				if ep == "authorization_endpoint" {
					form = u.RawQuery
				}
				res := e.rawDo(http.MethodPost, app.endpoint(ep), "", strings.NewReader(pad(form, limit+1)),
					"Content-Type", "application/x-www-form-urlencoded")
				require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "%s: %s", ep, res.body)
			}
			// At the limit the authorization request is read (and refused
			// for its state, stored nowhere).
			res := e.rawDo(http.MethodPost, app.endpoint("authorization_endpoint"), "", strings.NewReader(pad(u.RawQuery, limit)),
				"Content-Type", "application/x-www-form-urlencoded")
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, requests+1, e.authRequests(), "a request within the limit is stored")
			requests = e.authRequests()

			// An oversized state: a 400 that does not send it back.
			big := strings.Repeat("s", 2049)
			target, _ = app.authorizeURL("state", big)
			res = e.get(e.browser(), target)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, res.body)
			require.Empty(t, res.location())
			require.NotContains(t, res.body, big)
			form, _ := url.Parse(target)
			res = e.rawDo(http.MethodPost, app.endpoint("authorization_endpoint"), "", strings.NewReader(form.RawQuery),
				"Content-Type", "application/x-www-form-urlencoded")
			require.Equal(t, http.StatusBadRequest, res.StatusCode, res.body)
			// The others: the client's invalid_request, with its state.
			for _, p := range [][]string{
				{"nonce", strings.Repeat("n", 2049)},
				{"login_hint", strings.Repeat("h", 513) + "@example.com"},
				{"code_challenge", strings.Repeat("c", 129)},
				{"code_challenge", "too-short"},
				{"ui_locales", strings.Repeat("en ", 100)},
			} {
				res, a := app.authorize(e.browser(), p...)
				require.Equal(t, "invalid_request", app.errorFrom(res, a), "%s", p[0])
			}
			// The longest accepted values still work.
			target, _ = app.authorizeURL("state", strings.Repeat("s", 2048), "nonce", strings.Repeat("n", 2048))
			res = e.get(e.browser(), target)
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.True(t, strings.HasPrefix(res.location(), e.base+"/oidc/continue?id="), res.location())
			require.Equal(t, requests+1, e.authRequests())
			// The two stored requests were counted: the client's and its
			// /24's buckets (oidc.authorize_limit); nothing else is stored.
			before.RateLimits += 2
			require.Equal(t, before, e.counts())
			require.NotContains(t, e.logs.String(), "level=ERROR")
		})
	}
}

// Anyone can send an authorization request, signed in or not, and each is
// a row kept until it expires: oidc.authorize_limit bounds how many one
// client (an IPv4 address or an IPv6 /64, as trusted_proxies reads it)
// has stored per window. Past it the client is sent RFC 6749's
// temporarily_unavailable with its state, and nothing is stored; another
// client is not affected. A client that is no trusted proxy cannot pick
// its key with X-Forwarded-For.
func TestOpenIDAuthorizeLimit(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		b := backend{name: "database", strategy: config.StrategyDatabase, postgres: pg}
		limit := func(trust bool) func(*config.Config) {
			return func(c *config.Config) {
				c.OpenID.AuthorizeLimit.PerIP = 3
				if trust {
					c.TrustedProxies = []string{"127.0.0.1/32"}
				}
			}
		}
		send := func(e *env, r *rp, client string) (resp, authorization) {
			target, a := r.authorizeURL()
			return e.rawDo(http.MethodGet, target, "", nil, "X-Forwarded-For", client), a
		}
		stored := func(t *testing.T, e *env, res resp) {
			t.Helper()
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.True(t, strings.HasPrefix(res.location(), e.base+"/oidc/continue?id="), res.location())
		}

		e := startOP(t, b, limit(true))
		app := e.relyingParty("app", rpSecret)
		requests := e.authRequests()
		for range 3 {
			res, _ := send(e, app, "203.0.113.7")
			stored(t, e, res)
		}
		require.Equal(t, requests+3, e.authRequests())
		res, a := send(e, app, "203.0.113.7")
		require.Equal(t, "temporarily_unavailable", app.errorFrom(res, a))
		require.Equal(t, requests+3, e.authRequests(), "a refused request is stored")
		res, _ = send(e, app, "198.51.100.9") // another client
		stored(t, e, res)
		require.NotContains(t, e.logs.String(), "level=ERROR")

		// Without trusted_proxies the header names no one: every request
		// is the peer's.
		e = startOP(t, b, limit(false))
		app = e.relyingParty("app", rpSecret)
		for i := range 3 {
			res, _ := send(e, app, fmt.Sprintf("192.0.2.%d", i+1))
			stored(t, e, res)
		}
		res, a = send(e, app, "192.0.2.99")
		require.Equal(t, "temporarily_unavailable", app.errorFrom(res, a))
	})
}
