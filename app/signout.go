package app

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
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
	ctx := c.Request().Context()
	if err := a.unlinkOnSignOut(c, rq); err != nil {
		return err
	}
	if a.cfg.Session.Strategy == config.StrategyJWT {
		return a.revokeEverywhere(c, rq)
	}
	if _, err := a.sessions.DestroyAll(ctx, c.Response(), c.Request()); err != nil {
		// Never report a sign-out that did not happen server-side.
		return signin.Failf(signin.CodeConfiguration, "sign-out everywhere: delete sessions: %w", err)
	}
	a.metrics.SignOut()
	return a.kit.SendRedirect(c, rq, rq.CallbackURL)
}

// revokeEverywhere is sign-out everywhere for JWT sessions: the user's
// tokens signed in up to now are revoked, then this browser's cookie is
// cleared. A failed revocation answers Configuration (the cookie stays:
// nothing claims a sign-out that did not happen). It returns once the
// second of the revocation is over, so a sign-in right after is not ended.
func (a *App) revokeEverywhere(c echo.Context, rq *web.Request) error {
	ctx := c.Request().Context()
	uid, err := a.browser(c).SignedInUser(ctx)
	if err != nil { // as GET /session: an unreadable session is none
		a.log.Warn("sign-out everywhere: the session could not be read", "err", err, "request_id", web.RequestID(c))
	}
	if uid != "" {
		at := a.now()
		if _, err := a.store.RevokeSessions(ctx, uid, at); err != nil {
			return signin.Failf(signin.CodeConfiguration, "sign-out everywhere: revoke jwt sessions: %w", err)
		}
		a.log.Info("signed out everywhere: jwt sessions revoked", "user", uid, "request_id", web.RequestID(c))
		a.sessionsEnded(ctx, at)
	}
	if err := a.sessions.Destroy(ctx, c.Response(), c.Request()); err != nil {
		return signin.Failf(signin.CodeConfiguration, "sign-out everywhere: %w", err)
	}
	a.metrics.SignOut()
	return a.kit.SendRedirect(c, rq, rq.CallbackURL)
}

// unlinkOnSignOut removes the signed-in user's linked sign-in methods when
// "sign out everywhere" asks for it. A failure answers Configuration and
// signs nobody out: the user sees that it did not happen and can retry.
func (a *App) unlinkOnSignOut(c echo.Context, rq *web.Request) error {
	if !asksRemoveLinked(rq) {
		return nil
	}
	ctx := c.Request().Context()
	uid, err := a.browser(c).SignedInUser(ctx)
	if err != nil || uid == "" { // as GET /session: an unreadable session is none
		return nil
	}
	u, err := a.store.UserByID(ctx, uid)
	if errors.Is(err, models.ErrNotFound) { // deleted while its JWT lives on
		return nil
	}
	if err == nil {
		err = a.removeLinkedMethods(ctx, u, false)
	}
	if err != nil {
		return signin.Failf(signin.CodeConfiguration, "sign-out everywhere: remove linked sign-in methods: %w", err)
	}
	return nil
}
