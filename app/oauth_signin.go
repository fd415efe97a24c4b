package app

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
)

// oauthSignIn redirects to the provider's authorization endpoint.
func (a *App) oauthSignIn(c echo.Context, rq *request, p config.Provider) error {
	return a.fail(c, rq, ErrOAuthSignin, errors.New("oauth not implemented yet"))
}

// oauthCallback completes an OAuth sign-in.
func (a *App) oauthCallback(c echo.Context, rq *request, p config.Provider) error {
	return a.fail(c, rq, ErrOAuthCallback, errors.New("oauth not implemented yet"))
}
