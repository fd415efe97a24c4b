package accountpages

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/web"
)

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
func (h *Handler) postSignOutEverywhere(c echo.Context, rq *web.Request) error {
	if err := h.rules.SignOutEverywhere(c.Request().Context(), h.browser(c), h.jwt, asksRemoveLinked(rq)); err != nil {
		return err
	}
	h.metrics.SignOut()
	return h.kit.SendRedirect(c, rq, rq.CallbackURL)
}
