package accountpages

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/web"
)

// postSignOutEverywhere (after the route's CSRF check, with POST /signout's
// answer to a bad token) ends every session of the signed-in user, clears
// this browser's session cookie and redirects to the validated callbackUrl.
// The user's sessions signed in until now are revoked in both strategies
// (session_revocations, as `latchkey sessions revoke --user`; database
// sessions' rows are deleted with it): this instance refuses them at once,
// every other within session.revocation_poll, and the OpenID Provider's
// grants of those sign-ins end too. The answer is the same in both
// strategies, and against next-auth (where this path is a plain
// sign-out). With removeLinked the user's linked sign-in methods are
// removed first (never the last way to sign in).
func (h *Handler) postSignOutEverywhere(c echo.Context, rq *web.Request) error {
	if err := h.rules.SignOutEverywhere(c.Request().Context(), h.browser(c), asksRemoveLinked(rq)); err != nil {
		return err
	}
	h.metrics.SignOut()
	return h.kit.SendRedirect(c, rq, rq.CallbackURL)
}
