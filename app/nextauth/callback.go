package nextauth

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/web"
)

// callback is the return from a provider: GET (or POST for response_mode=
// form_post) for OAuth, GET of the e-mailed link (POST from its confirm page)
// for e-mail, POST of the e-mail and password for credentials. An unknown provider gets next-auth's 400 "not supported".
func (h *Handler) callback(c echo.Context, rq *web.Request) error {
	p := h.providers.byID[c.Param("provider")]
	return h.flowOf(p).Callback(c, rq, p)
}

// knownProvider answers a callback for an unknown provider, or a GET for a
// credentials one, with next-auth's 400 before request init, so nothing
// (not even a cookie) is issued.
func (h *Handler) knownProvider(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, ok := h.providers.byID[c.Param("provider")]
		// Credentials take POST only: a GET gets the same 400 (next-auth v4
		// answers 500 "not supported"; see docs/compatibility.md).
		if !ok || (p.Type == config.TypeCredentials && c.Request().Method != http.MethodPost) {
			return web.NotSupported
		}
		return next(c)
	}
}
