package app

import (
	"errors"

	"github.com/labstack/echo/v4"
)

// postSignIn starts a sign-in for a provider. CSRF is mandatory; an unknown
// provider gets next-auth's redirect to {base}/signin?csrf=true.
func (a *App) postSignIn(c echo.Context, rq *request) error {
	p, ok := a.providers.byID[c.Param("provider")]
	if !rq.csrfVerified || !ok {
		return a.sendRedirect(c, rq, a.base.URL("/signin")+"?csrf=true")
	}
	return a.fail(c, rq, ErrOAuthSignin, errors.New("provider "+p.ID+": sign-in not implemented yet"))
}
