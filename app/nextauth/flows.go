package nextauth

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/web"
)

// Flow is one kind of provider's sign-in, behind POST /signin/:provider
// and GET and POST /callback/:provider: OAuth and OpenID Connect, e-mail
// links, passkeys (app/oauthflow, app/emailflow, app/passkeyflow, given to
// New by the wiring) and credentials (this package's own).
type Flow interface {
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
func (h *Handler) flowOf(p config.Provider) Flow {
	if f, ok := h.flows[p.Type]; ok {
		return f
	}
	return h.flows[config.TypeOAuth]
}

// credentialsFlow is the password sign-in: credentials.go.
type credentialsFlow struct{ h *Handler }

// SignIn: credentials are posted to the callback, as next-auth v4's.
func (f credentialsFlow) SignIn(c echo.Context, rq *web.Request, _ config.Provider) error {
	return f.h.kit.SendRedirect(c, rq, f.h.base.URL("/signin"))
}

func (f credentialsFlow) Callback(c echo.Context, rq *web.Request, p config.Provider) error {
	return f.h.credentialsCallback(c, rq, p)
}

func (f credentialsFlow) CallbackWithoutCSRF(c echo.Context, rq *web.Request, _ config.Provider) error {
	return f.h.kit.RetryPage("/signin")(c, rq) // CSRF is mandatory, as next-auth v4
}
