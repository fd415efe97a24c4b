package web_test

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// A lang chosen on the sign-in page goes with a callbackUrl to one of
// latchkey's own pages (the OpenID continue page), replacing the lang it
// had; a callback elsewhere, or a request without lang, is left as sent.
func TestCallbackKeepsChosenLanguage(t *testing.T) {
	var logs bytes.Buffer
	var counted []signin.Code
	k := kit(t, &logs, &counted)
	const own = "http://localhost:3000/api/auth/oidc/continue?id=ab12"
	for _, tc := range []struct{ callback, lang, want string }{
		{own, "fr", own + "&lang=fr"},
		{own + "&lang=de", "fr-CA", "http://localhost:3000/api/auth/oidc/continue?id=ab12&lang=fr"},
		{own, "", own},
		{own, "sw", own}, // not offered: no choice made
		{"http://localhost:3000/dashboard", "fr", "http://localhost:3000/dashboard"},
		{"http://localhost:3000/api/authx/y", "fr", "http://localhost:3000/api/authx/y"},
	} {
		q := url.Values{"callbackUrl": {tc.callback}}
		if tc.lang != "" {
			q.Set("lang", tc.lang)
		}
		var got string
		rec := fail(t, k, "/api/auth/signin?"+q.Encode(), func(_ echo.Context, rq *web.Request) error {
			got = rq.CallbackURL
			return nil
		})
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, tc.want, got, "%s lang=%s", tc.callback, tc.lang)
	}
}

// outage is a database error marked as models/failover marks one.
type outage struct{}

func (outage) Error() string     { return "no writable database" }
func (outage) Unavailable() bool { return true }

// The JSON answer to a database outage (the next-auth clients' fetches)
// names the error page the client goes to: in the request's explicit
// language, as every other redirect to latchkey's pages; without lang,
// next-auth's URL as it is.
func TestOutageAnswerKeepsChosenLanguage(t *testing.T) {
	var logs bytes.Buffer
	var counted []signin.Code
	k := kit(t, &logs, &counted)
	for _, tc := range []struct{ query, want string }{
		{"?lang=fr", "http://localhost:3000/api/auth/error?error=TryLater&lang=fr"},
		{"", "http://localhost:3000/api/auth/error?error=TryLater"},
		{"?lang=sw", "http://localhost:3000/api/auth/error?error=TryLater"}, // not offered
	} {
		rec := fail(t, k, "/api/auth/session"+tc.query, func(_ echo.Context, rq *web.Request) error {
			rq.JSONMode = true
			return outage{}
		})
		require.Equal(t, http.StatusServiceUnavailable, rec.Code)
		require.JSONEq(t, `{"error":"TryLater","url":"`+tc.want+`"}`, rec.Body.String(), tc.query)
	}
}
