package app

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// getCSRF returns the CSRF token; init has already (re)issued the cookie.
func (a *App) getCSRF(c echo.Context, rq *request) error {
	noStore(c)
	if !plainJSON(c) {
		return c.JSON(http.StatusOK, map[string]string{"csrfToken": rq.csrfToken})
	}
	return a.sendBuilt(c, func(b []byte) []byte { return appendCSRF(b, rq.csrfToken) })
}
