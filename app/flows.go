package app

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/web"
)

// flow is one kind of provider's sign-in, behind POST /signin/:provider
// and GET and POST /callback/:provider: OAuth and OpenID Connect, e-mail
// links, passkeys, credentials. Each is a handler of its own, given to the
// dispatcher by the wiring.
type flow interface {
	// SignIn starts a sign-in (POST /signin/:provider, CSRF checked).
	SignIn(c echo.Context, rq *web.Request, p config.Provider) error
	// Callback is the return (GET or POST /callback/:provider).
	Callback(c echo.Context, rq *web.Request, p config.Provider) error
	// CallbackWithoutCSRF answers a POST callback whose csrfToken did not
	// match: OAuth's form_post is checked by its state instead, the e-mail
	// confirm page shows again (403), passkeys and credentials go back to
	// the sign-in page with ?csrf=true, as next-auth v4.
	CallbackWithoutCSRF(c echo.Context, rq *web.Request, p config.Provider) error
}

// flowOf is provider p's flow: its type's, or OAuth's for every other
// type (oauth, oidc), as next-auth's.
func (a *App) flowOf(p config.Provider) flow {
	if f, ok := a.flows[p.Type]; ok {
		return f
	}
	return a.flows[config.TypeOAuth]
}

// oauthFlow, emailFlow and credentialsFlow are the flows of package app
// until each moves into a package of its own (passkeys: app/passkeyflow).
type (
	oauthFlow       struct{ a *App }
	emailFlow       struct{ a *App }
	credentialsFlow struct{ a *App }
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

// SignIn: credentials are posted to the callback, as next-auth v4's.
func (f credentialsFlow) SignIn(c echo.Context, rq *web.Request, _ config.Provider) error {
	return f.a.kit.SendRedirect(c, rq, f.a.base.URL("/signin"))
}

func (f credentialsFlow) Callback(c echo.Context, rq *web.Request, p config.Provider) error {
	return f.a.credentialsCallback(c, rq, p)
}

func (f credentialsFlow) CallbackWithoutCSRF(c echo.Context, rq *web.Request, _ config.Provider) error {
	return f.a.retryPage("/signin")(c, rq) // CSRF is mandatory, as next-auth v4
}
