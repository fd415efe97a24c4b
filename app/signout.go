package app

import (
	"fmt"

	"github.com/labstack/echo/v4"
)

// postSignOut ends the session in whichever store is in use, clears every
// session cookie chunk and redirects to the validated callbackUrl.
func (a *App) postSignOut(c echo.Context, rq *request) error {
	if !rq.csrfVerified {
		return a.sendRedirect(c, rq, a.base.URL("/signout")+"?csrf=true")
	}
	if err := a.sessions.Destroy(c.Request().Context(), c.Response(), c.Request()); err != nil {
		// Never report a sign-out that did not happen server-side.
		return a.fail(c, rq, ErrConfiguration, fmt.Errorf("sign-out: delete session: %w", err))
	}
	return a.sendRedirect(c, rq, rq.callbackURL)
}
