package nextauth

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// postSignOut (after the route's CSRF check) ends the session in whichever store is in use, clears every
// session cookie chunk and redirects to the validated callbackUrl. A pending second step ends with it:
// its first factor is a sign-in the user asked to end (kept, it let the next person at the browser
// finish it; under `required`, enrol their own app and have the session).
func (h *Handler) postSignOut(c echo.Context, rq *web.Request) error {
	ctx := c.Request().Context()
	err := h.sessions.Destroy(ctx, c.Response(), c.Request()) // clears the cookie whatever happens
	stepErr := h.core.AbandonSecondStep(ctx, h.kit.SecondStep(c))
	h.kit.ClearSecondStep(c)
	// Never report a sign-out that did not happen server-side.
	if err != nil {
		return signin.Failf(signin.CodeConfiguration, "sign-out: delete session: %w", err)
	}
	if stepErr != nil {
		return signin.Failf(signin.CodeConfiguration, "sign-out: %w", stepErr)
	}
	h.metrics.SignOut()
	return h.kit.SendRedirect(c, rq, rq.CallbackURL)
}

// emptySessionBadRequest is the CSRF answer of a session update: 400 {}.
func (h *Handler) emptySessionBadRequest(c echo.Context, _ *web.Request) error {
	return web.SendJSON(c, http.StatusBadRequest, emptySession)
}

// callbackWithoutCSRF: an OAuth callback posted by the IdP (form_post) has
// no csrfToken; its state, a hash of the CSRF token, is checked instead. An
// e-mail link's confirm page posted without a matching token shows the page
// again with a 403. A password sign-in without one goes back to the sign-in
// page with ?csrf=true, as next-auth v4's.
func (h *Handler) callbackWithoutCSRF(c echo.Context, rq *web.Request) error {
	p := h.providers.byID[c.Param("provider")]
	return h.flowOf(p).CallbackWithoutCSRF(c, rq, p)
}

// postLog accepts the v4 client's logger beacon (navigator.sendBeacon) and,
// like next-auth, answers 200 with an empty body; the client's messages are
// not ours to log.
func (h *Handler) postLog(c echo.Context) error { return c.NoContent(http.StatusOK) }
