package app

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// issueCSRF sets a new CSRF token's cookie, "token|hash" as next-auth
// writes it, and returns the token: on every first visit, so the cookie
// line is its only allocation (the token is a piece of it).
func (a *App) issueCSRF(w http.ResponseWriter) string {
	raw, sum := a.csrf.Issue()
	return a.csrfCookie.Set(w, raw[:], sum[:])
}

// getCSRF returns the CSRF token; init has already (re)issued the cookie.
func (a *App) getCSRF(c echo.Context, rq *request) error {
	noStore(c)
	if !plainJSON(c) {
		return c.JSON(http.StatusOK, map[string]string{"csrfToken": rq.csrfToken})
	}
	return a.sendBuilt(c, func(b []byte) []byte { return appendCSRF(b, rq.csrfToken) })
}
