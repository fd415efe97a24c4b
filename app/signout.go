package app

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// postSignOut (after the route's CSRF check) ends the session in whichever store is in use, clears every
// session cookie chunk and redirects to the validated callbackUrl.
func (a *App) postSignOut(c echo.Context, rq *web.Request) error {
	if err := a.sessions.Destroy(c.Request().Context(), c.Response(), c.Request()); err != nil {
		// Never report a sign-out that did not happen server-side.
		return signin.Failf(signin.CodeConfiguration, "sign-out: delete session: %w", err)
	}
	a.metrics.SignOut()
	return a.kit.SendRedirect(c, rq, rq.CallbackURL)
}

// postSignOutEverywhere (after the route's CSRF check, with POST /signout's
// answer to a bad token) ends every session of the signed-in user, clears
// this browser's session cookie and redirects to the validated callbackUrl.
// Database sessions: their rows are deleted. JWT sessions live in their
// cookies, so the user's sessions signed in until now are revoked
// (session_revocations, as `latchkey sessions revoke --user`): this
// instance refuses them at once, every other within session.revocation_poll.
// The answer is the same in both strategies, and against next-auth (where
// this path is a plain sign-out). With removeLinked the user's linked
// sign-in methods are removed first (never the last way to sign in).
func (a *App) postSignOutEverywhere(c echo.Context, rq *web.Request) error {
	if err := a.pw.rules.SignOutEverywhere(c.Request().Context(), a.browser(c), a.cfg.Session.Strategy == config.StrategyJWT, asksRemoveLinked(rq)); err != nil {
		return err
	}
	a.metrics.SignOut()
	return a.kit.SendRedirect(c, rq, rq.CallbackURL)
}
