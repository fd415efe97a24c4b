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
