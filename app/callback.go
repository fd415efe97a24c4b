package app

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
)

// callback is the return from a provider: GET (or POST for response_mode=
// form_post) for OAuth, GET of the e-mailed link (POST from its confirm page)
// for e-mail. An unknown provider gets next-auth's 400 "not supported".
func (a *App) callback(c echo.Context, rq *request) error {
	p, ok := a.providers.byID[c.Param("provider")]
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	if typeOf(p) == config.TypeEmail {
		return a.emailCallback(c, rq, p)
	}
	return a.oauthCallback(c, rq, p)
}
