package web

import (
	"context"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
)

// UserReader reads a request's signed-in user from its session: the user
// id, "" when there is none; an error when the session store failed.
type UserReader interface {
	SignedInUser(ctx context.Context, r *http.Request) (string, error)
}

// UserAction is an action of a signed-in user, given the user's id.
type UserAction func(c echo.Context, rq *Request, userID string) error

// RequireUser is the one "require a signed-in user" middleware of the
// pages a user must be signed in to use (the password and passkeys
// pages): h runs with the user's id; a browser without a session is sent
// to sign in first, back to page (a path below the base) afterwards
// (ToSignIn); a session store that fails is TryLater.
func (k *Kit) RequireUser(users UserReader, page string, h UserAction) Action {
	return func(c echo.Context, rq *Request) error {
		uid, err := users.SignedInUser(c.Request().Context(), c.Request())
		switch {
		case err != nil:
			return TryLater("read the signed-in user", err)
		case uid == "":
			return k.ToSignIn(c, rq, page)
		}
		return h(c, rq, uid)
	}
}

// SignInURL is the sign-in page for a browser without a (living, or
// recent enough) session: {base}/signin?callbackUrl=<page> (a path below
// the base), with the request's explicit language.
func (k *Kit) SignInURL(c echo.Context, rq *Request, page string) string {
	to := k.base.URL("/signin") + "?" + url.Values{"callbackUrl": {k.base.URL(page)}}.Encode()
	return k.WithLang(c, rq, to)
}

// ToSignIn sends the browser to SignInURL.
func (k *Kit) ToSignIn(c echo.Context, rq *Request, page string) error {
	return k.SendRedirect(c, rq, k.SignInURL(c, rq, page))
}

// StepUpURL is the step-up form for a signed-in session that must prove
// its second factor before a change on page (a path below the base):
// {base}/two-factor?callbackUrl=<page>, with the request's explicit
// language. The form's code raises the session to two factors and returns
// to page; nothing changes until then.
func (k *Kit) StepUpURL(c echo.Context, rq *Request, page string) string {
	to := k.base.URL("/two-factor") + "?" + url.Values{"callbackUrl": {k.base.URL(page)}}.Encode()
	return k.WithLang(c, rq, to)
}

// ToStepUp sends the browser to StepUpURL.
func (k *Kit) ToStepUp(c echo.Context, rq *Request, page string) error {
	return k.SendRedirect(c, rq, k.StepUpURL(c, rq, page))
}
