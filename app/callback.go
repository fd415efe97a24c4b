package app

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// callback is the return from a provider (GET, or POST for form_post).
func (a *App) callback(c echo.Context, rq *request) error {
	if _, ok := a.providers.byID[c.Param("provider")]; !ok {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	return a.fail(c, rq, ErrCallback, nil)
}
