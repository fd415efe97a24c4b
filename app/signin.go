package app

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/web"
)

// postSignIn starts a sign-in for a provider (the route has checked CSRF).
// An unknown provider gets next-auth's redirect to {base}/signin?csrf=true.
func (a *App) postSignIn(c echo.Context, rq *web.Request) error {
	p, ok := a.providers.byID[c.Param("provider")]
	if !ok {
		return a.retryPage("/signin")(c, rq)
	}
	switch p.Type {
	case config.TypeEmail:
		return a.emailSignIn(c, rq, p)
	case config.TypeWebAuthn, config.TypeCredentials: // signed in from the page's script (passkeys, as Auth.js's credentials) or posted to /callback (credentials, next-auth v4)
		return a.kit.SendRedirect(c, rq, a.base.URL("/signin"))
	}
	return a.oauthSignIn(c, rq, p)
}
