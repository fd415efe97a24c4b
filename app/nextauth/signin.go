package nextauth

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/web"
)

// postSignIn starts a sign-in for a provider (the route has checked CSRF).
// An unknown provider gets next-auth's redirect to {base}/signin?csrf=true.
func (h *Handler) postSignIn(c echo.Context, rq *web.Request) error {
	p, ok := h.providers.byID[c.Param("provider")]
	if !ok {
		return h.kit.RetryPage("/signin")(c, rq)
	}
	return h.flowOf(p).SignIn(c, rq, p)
}
