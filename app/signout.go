package app

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// postSignOut (after the route's CSRF check) ends the session in whichever store is in use, clears every
// session cookie chunk and redirects to the validated callbackUrl.
func (a *App) postSignOut(c echo.Context, rq *web.Request) error {
	if err := a.sessions.Destroy(c.Request().Context(), c.Response(), c.Request()); err != nil {
		// Never report a sign-out that did not happen server-side.
		return signin.Failf(signin.CodeConfiguration, "sign-out: delete session: %w", err)
	}
	a.metrics.SignOut()
	return a.kit.SendRedirect(c, rq, rq.CallbackURL)
}
