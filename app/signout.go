package app

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
)

// postSignOut (after the route's CSRF check) ends the session in whichever store is in use, clears every
// session cookie chunk and redirects to the validated callbackUrl.
func (a *App) postSignOut(c echo.Context, rq *request) error {
	if err := a.sessions.Destroy(c.Request().Context(), c.Response(), c.Request()); err != nil {
		// Never report a sign-out that did not happen server-side.
		return signin.Failf(signin.CodeConfiguration, "sign-out: delete session: %w", err)
	}
	a.metrics.SignOut()
	return a.sendRedirect(c, rq, rq.callbackURL)
}

// postSignOutEverywhere (after the route's CSRF check, with POST /signout's
// answer to a bad token) ends every session of the signed-in user, clears
// this browser's session cookie and redirects to the validated callbackUrl.
// With jwt sessions only this browser's session can end: the others live in
// their own cookies until they expire (at the latest sign-in +
// absolute_max_age). The answer is the same, so a client behaves alike
// against both strategies (and against next-auth, where this path is a plain
// sign-out); the log says what happened.
func (a *App) postSignOutEverywhere(c echo.Context, rq *request) error {
	everywhere, err := a.sessions.DestroyAll(c.Request().Context(), c.Response(), c.Request())
	if err != nil {
		// Never report a sign-out that did not happen server-side.
		return signin.Failf(signin.CodeConfiguration, "sign-out everywhere: delete sessions: %w", err)
	}
	a.metrics.SignOut()
	if !everywhere {
		a.log.Info("sign-out everywhere ended only this browser's session: jwt sessions in other browsers stay valid until they expire")
	}
	return a.sendRedirect(c, rq, rq.callbackURL)
}
