package app

import (
	"github.com/labstack/echo/v4"
)

// signInRefusal is the SignIn hook saying no: AccessDenied, or a redirect
// the hook chose (validated like every other target).
type signInRefusal struct {
	redirectTo string
}

func (r *signInRefusal) Error() string { return "sign-in refused by the SignIn hook" }

// checkSignIn runs the SignIn hook; nil means the sign-in may go on.
func (a *App) checkSignIn(c echo.Context, in SignInInput) *signInRefusal {
	ok, to := a.hooks.SignIn(c.Request().Context(), in)
	if to != "" {
		return &signInRefusal{redirectTo: to}
	}
	if !ok {
		return &signInRefusal{}
	}
	return nil
}

// refuse answers a refusal: the hook's redirect, or error=AccessDenied.
func (a *App) refuse(c echo.Context, rq *request, r *signInRefusal) error {
	if r.redirectTo != "" {
		return a.sendRedirect(c, rq, a.redirect(r.redirectTo))
	}
	return a.fail(c, rq, ErrAccessDenied, r)
}
