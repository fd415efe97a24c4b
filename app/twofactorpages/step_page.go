package twofactorpages

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// stepMessages are the page's messages for the ?error= codes it is sent
// back with (views/locales); TwoFactorRequired is the client's code for a
// held sign-in, shown as the page's instruction, not as a failure.
var stepMessages = map[string]string{
	string(signin.CodeTwoFactorInvalid):   "TwoFactorInvalid",
	string(signin.CodeTwoFactorThrottled): "TwoFactorThrottled",
}

// getStep is GET {base}/two-factor: the code form of the browser's pending
// second step; or, for a signed-in browser without one, the step-up form
// (forward-auth's hosts that require two factors send it here). A pending
// enrolment goes to the setup page; a browser with neither starts over
// at the sign-in page. A session that has proved its second factor
// already goes on to callbackUrl: there is nothing to step up, and the
// form would have it spend another code (a double submit's second post,
// refused because the first spent its code, lands here signed in).
func (h *Handler) getStep(c echo.Context, rq *web.Request) error {
	ctx := c.Request().Context()
	stepUp := false
	st, err := h.rules.Step(ctx, h.stepOf(c))
	switch {
	case err == nil && st.Enrol:
		return h.kit.SendRedirect(c, rq, h.pageURL(c, rq, settingsPage, ""))
	case err == nil:
	case errors.Is(err, twofactor.ErrNoStep):
		uid, methods, err := h.browser(c).SignedInMethods(ctx)
		if err != nil {
			return web.TryLater("read the signed-in user", err)
		}
		if uid == "" {
			return h.kit.SendRedirect(c, rq, h.pageURL(c, rq, "/signin", string(signin.CodeTwoFactorExpired)))
		}
		if twofactor.ProvedSecondFactor(methods) {
			return h.kit.SendRedirect(c, rq, rq.CallbackURL)
		}
		status, err := h.rules.StatusOf(ctx, uid)
		if err != nil {
			return web.TryLater("read two-factor", err)
		}
		if !status.On { // a step-up needs a second factor first
			return h.kit.SendRedirect(c, rq, h.pageURL(c, rq, settingsPage, ""))
		}
		stepUp = true
	default:
		return web.TryLater("read the pending second step", err)
	}
	d := views.SecondStep{
		Page:         h.kit.Page(c, rq, "TitleTwoFactor"),
		CSRFToken:    rq.CSRFToken,
		ActionURL:    h.base.URL("/callback/two-factor"),
		CallbackURL:  rq.CallbackURL,
		RememberDays: int(h.remember.Hours() / 24),
		StepUp:       stepUp,
		Error:        stepMessages[c.QueryParam("error")],
		SignInURL:    h.base.URL("/signin"),
	}
	status := http.StatusOK
	if d.Error != "" {
		status = http.StatusUnauthorized
	}
	return web.Render(c, status, views.SecondStepPage(d))
}
