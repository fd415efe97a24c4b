package app

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/web"
)

// oauthFlow, emailFlow and passkeyFlow are the sign-in flows (nextauth.Flow)
// of package app until each moves into a package of its own.
type (
	oauthFlow   struct{ a *App }
	emailFlow   struct{ a *App }
	passkeyFlow struct{ a *App }
)

func (f oauthFlow) SignIn(c echo.Context, rq *web.Request, p config.Provider) error {
	return f.a.oauthSignIn(c, rq, p)
}

func (f oauthFlow) Callback(c echo.Context, rq *web.Request, p config.Provider) error {
	return f.a.oauthCallback(c, rq, p)
}

func (f oauthFlow) CallbackWithoutCSRF(c echo.Context, rq *web.Request, p config.Provider) error {
	return f.a.oauthCallback(c, rq, p)
}

func (f emailFlow) SignIn(c echo.Context, rq *web.Request, p config.Provider) error {
	return f.a.emailSignIn(c, rq, p)
}

func (f emailFlow) Callback(c echo.Context, rq *web.Request, p config.Provider) error {
	return f.a.emailCallback(c, rq, p)
}

func (f emailFlow) CallbackWithoutCSRF(c echo.Context, rq *web.Request, p config.Provider) error {
	return f.a.confirmPage(c, rq, p, rq.Form, http.StatusForbidden, msgExpired)
}

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
