package app

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/web"
)

// passkeyFlow is the passkeys' sign-in flow (nextauth.Flow) of package app
// until it moves into a package of its own.
type passkeyFlow struct{ a *App }

// SignIn: a passkey sign-in is started by the sign-in page's script
// (GET /webauthn-options), as Auth.js's; a POST here goes back to the page.
func (f passkeyFlow) SignIn(c echo.Context, rq *web.Request, _ config.Provider) error {
	return f.a.kit.SendRedirect(c, rq, f.a.base.URL("/signin"))
}

func (f passkeyFlow) Callback(c echo.Context, rq *web.Request, p config.Provider) error {
	return f.a.passkeyCallback(c, rq, p)
}

func (f passkeyFlow) CallbackWithoutCSRF(c echo.Context, rq *web.Request, _ config.Provider) error {
	return f.a.kit.RetryPage("/signin")(c, rq) // CSRF is mandatory, as next-auth v4
}
