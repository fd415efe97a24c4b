package app

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
)

// emailSignIn sends a magic link (issue 4; placeholder until it lands).
func (a *App) emailSignIn(c echo.Context, rq *request, p config.Provider) error {
	return a.fail(c, rq, ErrEmailSignin, errors.New("e-mail sign-in not implemented yet"))
}

// emailCallback redeems a magic link (issue 4; placeholder until it lands).
func (a *App) emailCallback(c echo.Context, rq *request, p config.Provider) error {
	return a.fail(c, rq, ErrVerification, errors.New("e-mail sign-in not implemented yet"))
}
