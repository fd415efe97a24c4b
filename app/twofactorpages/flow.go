package twofactorpages

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/app/web"
)

// Flow is the `two-factor` provider's sign-in flow (a nextauth.Flow): the
// next-auth client's signIn("two-factor", {code}) and the second-step
// page's form post the code to POST {base}/callback/two-factor.
func (h *Handler) Flow() Flow { return Flow{h} }

// Flow is the handler as the NextAuth routes dispatch to it.
type Flow struct{ h *Handler }

// SignIn (POST /signin/two-factor) goes to the second-step page, as the
// credentials provider's goes to the sign-in page.
func (f Flow) SignIn(c echo.Context, rq *web.Request, _ config.Provider) error {
	return f.h.kit.SendRedirect(c, rq, f.h.pageURL(c, rq, stepPage, ""))
}

// Callback takes the code: the browser's pending second step is finished
// with it, or, without one, the signed-in session is stepped up; a session
// that has its second factor already goes on to callbackUrl, the code
// unchecked (signin.ErrSteppedUp). A GET has no code to take: it goes to
// the page.
func (f Flow) Callback(c echo.Context, rq *web.Request, _ config.Provider) error {
	h := f.h
	if c.Request().Method != http.MethodPost {
		return h.kit.SendRedirect(c, rq, h.pageURL(c, rq, stepPage, ""))
	}
	ctx := c.Request().Context()
	code, remember := rq.Form.Get("code"), rq.Form.Get("remember") == "on" || rq.Form.Get("remember") == "true"
	var out *signin.SignedIn
	var err error
	if cookie := h.stepOf(c); cookie != "" {
		out, err = h.core.SecondStep(ctx, h.browser(c), cookie, code, remember)
	} else {
		out, err = h.core.StepUp(ctx, h.browser(c), code, remember)
	}
	if errors.Is(err, signin.ErrSteppedUp) {
		h.log.Info("step-up of a session that has its second factor: nothing to do, no code checked", "request_id", web.RequestID(c))
		return h.kit.SendRedirect(c, rq, rq.CallbackURL)
	}
	if err != nil {
		return h.refused(c, rq, err)
	}
	h.metrics.SecondStep(metrics.OutcomeSuccess)
	if out.SecondFactor.Method == twofactor.MethodRecovery {
		h.accounts.TellTwoFactor(h.kit.MailContext(c, rq), out.User, accounts.RecoveryCodeUsed, out.SecondFactor.CodesLeft)
	}
	return h.kit.AfterSignIn(c, rq, out)
}

// CallbackWithoutCSRF: back to the page with ?csrf=true.
func (f Flow) CallbackWithoutCSRF(c echo.Context, rq *web.Request, _ config.Provider) error {
	return f.h.kit.RetryPage(stepPage)(c, rq)
}

// refused answers a refused code as the credentials callback answers a
// refused password (the JSON modes of the next-auth client included):
//
//	TwoFactorInvalid:       401, back to the second-step page with ?error=
//	TwoFactorThrottled:     429, the same
//	TwoFactorExpired:       401, to the sign-in page with ?error= (start over)
//	TwoFactorSetupRequired: 401, to the enrolment page
//
// v4's JSON mode gets {url} with that status; v5's X-Auth-Return-Redirect
// gets 200 {url} with &code=two-factor; a browser form a 302. Anything
// else goes to the kit's one failure adapter. The cause (never the code)
// is logged once and the outcome counted.
func (h *Handler) refused(c echo.Context, rq *web.Request, err error) error {
	code := signin.CodeOf(err)
	h.metrics.SecondStep(string(code))
	page, status := stepPage, http.StatusUnauthorized
	switch code {
	case signin.CodeTwoFactorInvalid:
	case signin.CodeTwoFactorThrottled:
		status = http.StatusTooManyRequests
	case signin.CodeTwoFactorExpired:
		page = "/signin"
	case signin.CodeTwoFactorSetupRequired:
		page = settingsPage
	default:
		return h.kit.Fail(c, rq, err)
	}
	var e *signin.Error
	cause := err.Error()
	if errors.As(err, &e) && e.Cause != nil {
		cause = e.Cause.Error()
	}
	h.log.Warn("two-factor code refused", "code", string(code), "cause", cause, "request_id", web.RequestID(c))
	to := h.pageURL(c, rq, page, string(code))
	if rq.ReturnHeader && !rq.JSONMode {
		return h.kit.SendRedirect(c, rq, to+"&code="+config.TwoFactorProviderID)
	}
	return h.kit.SendStatusRedirect(c, rq, status, to)
}

// pageURL is one of the pages with the sign-in's callbackUrl, an error
// code when given, and the request's explicit language.
func (h *Handler) pageURL(c echo.Context, rq *web.Request, page, code string) string {
	q := url.Values{"callbackUrl": {rq.CallbackURL}}
	if code != "" {
		q.Set("error", code)
	}
	return h.kit.WithLang(c, rq, h.base.URL(page)+"?"+q.Encode())
}
