package app

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/session"
)

// browser is the request as the sign-in core sees it (signin.Browser).
func (w *wiring) browser(c echo.Context) session.Browser {
	return session.Browser{Sessions: w.sessions, W: c.Response(), R: c.Request(), Created: w.metrics.SessionCreated}
}
