package accountpages

import (
	"errors"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/signin"
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
// removed first (never the last way to sign in), from a session that may
// unlink them (a recent sign-in, with the second factor once it is on);
// any other is sent to sign in again (SessionRequired) or to the step-up
// form, back to callbackUrl, and nothing is done.
func (h *Handler) postSignOutEverywhere(c echo.Context, rq *web.Request) error {
	ctx := c.Request().Context()
	var who accounts.SignedIn
	removeLinked := asksRemoveLinked(rq)
	if removeLinked {
		s, _, err := h.sessions.Read(ctx, c.Request())
		if err != nil {
			return web.TryLater("read the signed-in user", err)
		}
		if s != nil {
			who = accounts.SignedIn{UserID: s.User.ID, Since: s.SignedIn, Methods: s.Methods()}
		}
	}
	err := h.rules.SignOutEverywhere(ctx, h.browser(c), removeLinked, who)
	switch {
	case errors.Is(err, accounts.ErrStepUp):
		to := h.base.URL("/two-factor") + "?" + url.Values{"callbackUrl": {rq.CallbackURL}}.Encode()
		return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, to))
	case errors.Is(err, accounts.ErrReauth):
		h.log.Info("sign-out everywhere removing linked methods needs a recent sign-in", "user", who.UserID, "request_id", web.RequestID(c))
		to := h.base.URL("/signin") + "?" + url.Values{"callbackUrl": {rq.CallbackURL}, "error": {string(signin.CodeSessionRequired)}}.Encode()
		return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, to))
	case err != nil:
		return err
	}
	h.metrics.SignOut()
	return h.kit.SendRedirect(c, rq, rq.CallbackURL)
}
