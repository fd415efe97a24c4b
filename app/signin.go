package app

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/web"
)

// postSignIn starts a sign-in for a provider (the route has checked CSRF).
// An unknown provider gets next-auth's redirect to {base}/signin?csrf=true.
func (a *App) postSignIn(c echo.Context, rq *web.Request) error {
	p, ok := a.providers.byID[c.Param("provider")]
	if !ok {
		return a.retryPage("/signin")(c, rq)
	}
	return a.flowOf(p).SignIn(c, rq, p)
}
