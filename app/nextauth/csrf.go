package nextauth

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/web"
)

// getCSRF returns the CSRF token; init has already (re)issued the cookie.
func (h *Handler) getCSRF(c echo.Context, rq *web.Request) error {
	web.NoStore(c)
	if !web.PlainJSON(c) {
		return c.JSON(http.StatusOK, map[string]string{"csrfToken": rq.CSRFToken})
	}
	return h.kit.SendBuilt(c, func(b []byte) []byte { return appendCSRF(b, rq.CSRFToken) })
}
