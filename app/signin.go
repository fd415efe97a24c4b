package app

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
)

// postSignIn starts a sign-in for a provider (the route has checked CSRF).
// An unknown provider gets next-auth's redirect to {base}/signin?csrf=true.
func (a *App) postSignIn(c echo.Context, rq *request) error {
	p, ok := a.providers.byID[c.Param("provider")]
	if !ok {
		return a.retryPage("/signin")(c, rq)
	}
	if p.Type == config.TypeEmail {
		return a.emailSignIn(c, rq, p)
	}
	return a.oauthSignIn(c, rq, p)
}
