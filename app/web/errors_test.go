package web_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/csrf"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/redirect"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// kit is a Kit over the service at http://localhost:3000/api/auth, its
// log written to logs; counted collects the codes OnFailure is told.
func kit(t *testing.T, logs *bytes.Buffer, counted *[]signin.Code) *web.Kit {
	t.Helper()
	base, err := config.ParseBase("http://localhost:3000/api/auth")
	require.NoError(t, err)
	langs, err := i18n.Load(views.Locales(), "", nil)
	require.NoError(t, err)
	return web.NewKit(web.KitConfig{
		Base: base, Log: slog.New(slog.NewTextHandler(logs, nil)), Names: cookies.NewNames("next-auth", false),
		CSRF: csrf.NewSigner("a-secret-of-thirty-two-characters!!"), Policy: redirect.NewPolicy(base.Origin, nil),
		Langs: langs, MaxBodyBytes: 1 << 16,
		OnFailure: func(_ echo.Context, code signin.Code) { *counted = append(*counted, code) },
	})
}

// fail runs h as a route's action and returns the answer.
func fail(t *testing.T, k *web.Kit, target string, h web.Action) *httptest.ResponseRecorder {
	t.Helper()
	e := echo.New()
	rec := httptest.NewRecorder()
	c := e.NewContext(httptest.NewRequest(http.MethodGet, target, nil), rec)
	require.NoError(t, k.WithRequest(h)(c))
	return rec
}

// Every failure shape becomes its answer in Kit.Fail, with its cause
// logged once and never shown.
func TestFailShapes(t *testing.T) {
	const secretCause = "db said: token=0123456789abcdef"
	cause := errors.New(secretCause)

	t.Run("a NextAuth code is the error page's redirect", func(t *testing.T) {
		var logs bytes.Buffer
		var counted []signin.Code
		k := kit(t, &logs, &counted)
		rec := fail(t, k, "/api/auth/callback/x", func(echo.Context, *web.Request) error {
			return signin.Failf(signin.CodeOAuthCallback, "exchange: %w", cause)
		})
		require.Equal(t, http.StatusFound, rec.Code)
		require.Equal(t, "http://localhost:3000/api/auth/error?error=OAuthCallback", rec.Header().Get("Location"))
		require.Equal(t, []signin.Code{signin.CodeOAuthCallback}, counted)
		require.Equal(t, 1, strings.Count(logs.String(), "request failed"), logs.String())
		require.NotContains(t, rec.Body.String(), "token=")
	})

	t.Run("in JSON mode it is {url}", func(t *testing.T) {
		var logs bytes.Buffer
		var counted []signin.Code
		k := kit(t, &logs, &counted)
		rec := fail(t, k, "/api/auth/callback/x", func(_ echo.Context, rq *web.Request) error {
			rq.JSONMode = true
			return &web.Error{Code: signin.CodeAccessDenied, Cause: cause}
		})
		require.Equal(t, http.StatusOK, rec.Code)
		require.JSONEq(t, `{"url":"http://localhost:3000/api/auth/error?error=AccessDenied"}`, rec.Body.String())
		require.Equal(t, []signin.Code{signin.CodeAccessDenied}, counted, "web.Error's own code, not Configuration")
	})

	t.Run("the SignIn hook's redirect goes through the redirect policy", func(t *testing.T) {
		var logs bytes.Buffer
		var counted []signin.Code
		k := kit(t, &logs, &counted)
		for target, want := range map[string]string{
			"/welcome":                "http://localhost:3000/welcome",
			"https://evil.example/x":  "http://localhost:3000",
			"//evil.example/protocol": "http://localhost:3000",
		} {
			rec := fail(t, k, "/api/auth/callback/x", func(echo.Context, *web.Request) error {
				return &signin.Error{Code: signin.CodeAccessDenied, Redirect: target}
			})
			require.Equal(t, want, rec.Header().Get("Location"), target)
		}
	})

	t.Run("a page notice is the notice page with its status", func(t *testing.T) {
		var logs bytes.Buffer
		var counted []signin.Code
		k := kit(t, &logs, &counted)
		rec := fail(t, k, "/api/auth/reset", func(echo.Context, *web.Request) error {
			return web.TryLater("reset", cause)
		})
		require.Equal(t, http.StatusServiceUnavailable, rec.Code)
		require.Contains(t, rec.Header().Get("Content-Type"), "text/html")
		require.Contains(t, rec.Body.String(), "<html")
		require.NotContains(t, rec.Body.String(), "token=")
		require.Empty(t, counted, "an account page's failure is no sign-in outcome")
		require.Equal(t, 1, strings.Count(logs.String(), "request failed"), logs.String())
		require.Contains(t, logs.String(), "step=reset")
	})

	t.Run("a JSON error is its body with its status", func(t *testing.T) {
		var logs bytes.Buffer
		var counted []signin.Code
		k := kit(t, &logs, &counted)
		rec := fail(t, k, "/api/auth/webauthn-options/p", func(echo.Context, *web.Request) error {
			return web.JSONError(http.StatusUnauthorized, map[string]string{"error": "Sign in again"}, "", nil)
		})
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		require.JSONEq(t, `{"error":"Sign in again"}`, rec.Body.String())
		require.Empty(t, logs.String(), "a refusal without a cause is an answer, not an incident")
	})

	t.Run("other errors go on to the router's error handler", func(t *testing.T) {
		var logs bytes.Buffer
		var counted []signin.Code
		k := kit(t, &logs, &counted)
		e := echo.New()
		c := e.NewContext(httptest.NewRequest(http.MethodGet, "/api/auth/reset", nil), httptest.NewRecorder())
		err := k.WithRequest(func(echo.Context, *web.Request) error { return web.NotSupported })(c)
		require.ErrorIs(t, err, web.NotSupported)
	})
}

// RetryPage sends the browser back to the page with ?csrf=true, keeping an
// explicit language, as {url} in JSON mode.
func TestRetryPage(t *testing.T) {
	var logs bytes.Buffer
	var counted []signin.Code
	k := kit(t, &logs, &counted)
	rec := fail(t, k, "/api/auth/signin/x?lang=de", k.RetryPage("/signin"))
	require.Equal(t, http.StatusFound, rec.Code)
	require.Equal(t, "http://localhost:3000/api/auth/signin?csrf=true&lang=de", rec.Header().Get("Location"))
}
