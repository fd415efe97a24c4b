package twofactorpages

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/views"
)

// settingsMessages are the settings and setup pages' messages for their
// ?error= and ?notice= values.
var settingsMessages = map[string]string{
	string(signin.CodeTwoFactorInvalid):       "TwoFactorInvalid",
	string(signin.CodeTwoFactorThrottled):     "TwoFactorThrottled",
	string(signin.CodeTwoFactorSetupRequired): "TwoFactorSetupRequired",
	"disabled":          "TwoFactorDisabledNotice",
	errRequiredByPolicy: "TwoFactorRequiredByPolicy",
}

// errRequiredByPolicy is the settings page's ?error= when turning
// two-factor off is refused because the policy requires it for the user.
const errRequiredByPolicy = "TwoFactorRequiredByPolicy"

// who is the user a settings request acts for: the signed-in one, or the
// one whose sign-in waits for a required enrolment (pending: the step's
// cookie). recent: the session signed in within the re-authentication
// window (a pending enrolment is minutes old by construction).
type who struct {
	user    *models.User
	pending string
	recent  bool
	// step is the pending enrolment's token hash ("" when signed in).
	step string
}

// browser is the value only this browser holds that its enrolment is bound
// to (twofactor.Enrol): a pending enrolment's step, which the sign-in's
// confirmation reads too; else the browser's CSRF token.
func (w *who) browser(rq *web.Request) string {
	if w.step != "" {
		return w.step
	}
	return rq.CSRFToken
}

// whoIs finds the request's user; nil when there is none (sign in first).
func (h *Handler) whoIs(c echo.Context) (*who, error) {
	ctx := c.Request().Context()
	if cookie := h.stepOf(c); cookie != "" {
		st, err := h.rules.Step(ctx, cookie)
		if err == nil && st.Enrol {
			u, err := h.accounts.SignedInUser(ctx, st.UserID)
			if err != nil {
				return nil, err
			}
			return &who{user: u, pending: cookie, recent: true, step: st.TokenHash}, nil
		}
	}
	uid, since, err := h.browser(c).SignedInSince(ctx)
	if err != nil || uid == "" {
		return nil, err
	}
	u, err := h.accounts.SignedInUser(ctx, uid)
	if errors.Is(err, accounts.ErrSignedOut) { // deleted while the session lives on
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &who{user: u, recent: h.now().Sub(since) <= h.reauth}, nil
}

// withWho runs next for the request's user (whoIs); a browser with none
// signs in first, back to the settings page.
func (h *Handler) withWho(next func(c echo.Context, rq *web.Request, w *who) error) web.Action {
	return func(c echo.Context, rq *web.Request) error {
		w, err := h.whoIs(c)
		if err != nil {
			return web.TryLater("read the signed-in user", err)
		}
		if w == nil {
			return h.kit.ToSignIn(c, rq, settingsPage)
		}
		return next(c, rq, w)
	}
}

// getSettings is GET {base}/account/two-factor: the settings when
// two-factor is on; else the setup (a QR code and the secret), which asks
// for a recent sign-in, as adding a passkey does.
func (h *Handler) getSettings(c echo.Context, rq *web.Request, w *who) error {
	ctx := c.Request().Context()
	status, err := h.rules.StatusOf(ctx, w.user.ID)
	if err != nil {
		return web.TryLater("read two-factor", err)
	}
	msg := settingsMessages[c.QueryParam("error")]
	if status.On && w.pending == "" {
		return web.Render(c, http.StatusOK, views.TwoFactorSettingsPage(views.TwoFactorSettings{
			Page: h.kit.Page(c, rq, "TitleTwoFactorSettings"), CSRFToken: rq.CSRFToken,
			Since: status.Since.UTC().Format(time.DateOnly), CodesLeft: status.CodesLeft,
			RegenerateURL: h.base.URL(codesPath), DisableURL: h.base.URL(disablePath), Required: h.rules.MayNotDisable(w.user),
			Notice: settingsMessages[c.QueryParam("notice")], Error: msg,
		}))
	}
	if !w.recent {
		return h.reauthFirst(c, rq)
	}
	return h.renderSetup(c, rq, w, msg)
}

// renderSetup shows the enrolment: the same secret to this browser until
// it is confirmed or EnrolLifetime passes; another browser gets its own.
func (h *Handler) renderSetup(c echo.Context, rq *web.Request, w *who, msg string) error {
	account := w.user.ID
	if w.user.Email != nil {
		account = *w.user.Email
	}
	e, err := h.rules.Enrol(c.Request().Context(), w.user.ID, account, w.browser(rq))
	if errors.Is(err, twofactor.ErrAlreadyOn) {
		return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(settingsPage)))
	}
	if err != nil {
		return err
	}
	page := h.kit.Page(c, rq, "TitleTwoFactorSetup")
	qr, err := qrSVG(e.URI)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if msg == "" && w.pending != "" {
		msg = "TwoFactorSetupRequired"
	} else if msg != "" {
		status = http.StatusUnauthorized
	}
	return web.Render(c, status, views.TwoFactorSetupPage(views.TwoFactorSetup{
		Page: page, CSRFToken: rq.CSRFToken, ActionURL: h.base.URL(enablePath), CallbackURL: rq.CallbackURL,
		QR: qr, Secret: e.Secret, URI: e.URI, Required: w.pending != "", Error: msg,
	}))
}

// reauthFirst sends a session too old to change two-factor to sign in
// again, back to the settings page.
func (h *Handler) reauthFirst(c echo.Context, rq *web.Request) error {
	h.log.Info("two-factor settings need a recent sign-in", "request_id", web.RequestID(c))
	return h.kit.ToSignIn(c, rq, settingsPage)
}

// postEnable confirms the enrolment with the app's current code, then
// shows the recovery codes once. A pending enrolment's sign-in then has
// its session; a signed-in user's address is told.
func (h *Handler) postEnable(c echo.Context, rq *web.Request, w *who) error {
	ctx := c.Request().Context()
	if !w.recent {
		return h.reauthFirst(c, rq)
	}
	code := rq.Form.Get("code")
	var codes []string
	var err error
	cont := h.base.URL(settingsPage)
	if w.pending != "" {
		var out *signin.SignedIn
		out, codes, err = h.core.EnrolAndSignIn(ctx, h.browser(c), w.pending, code)
		if err == nil {
			h.kit.SessionStarted(c, out)
			cont = rq.CallbackURL
		}
	} else {
		codes, err = h.rules.Confirm(ctx, w.user.ID, code, w.browser(rq))
		if err != nil {
			err = stepFailure(err)
		}
	}
	if err != nil {
		return h.enableRefused(c, rq, err)
	}
	h.metrics.SecondStep(metrics.OutcomeSuccess)
	h.log.Info("two-factor turned on", "user", w.user.ID, "request_id", web.RequestID(c))
	h.accounts.TellTwoFactor(h.kit.MailContext(c, rq), w.user, accounts.TwoFactorTurnedOn, 0)
	return h.showCodes(c, rq, codes, cont, "TwoFactorEnabledNotice")
}

// enableRefused answers a refused enrolment: a pending sign-in that is
// gone starts over (refused); a wrong code, or one while backing off, goes
// back to the setup page with its message (the same secret, so the app
// keeps working); anything else is the kit's failure.
func (h *Handler) enableRefused(c echo.Context, rq *web.Request, err error) error {
	switch code := signin.CodeOf(err); code {
	case signin.CodeTwoFactorExpired:
		return h.refused(c, rq, err)
	case signin.CodeTwoFactorInvalid, signin.CodeTwoFactorThrottled:
		h.metrics.SecondStep(string(code))
		h.log.Warn("two-factor enrolment refused", "code", string(code), "cause", err.Error(), "request_id", web.RequestID(c))
		return h.kit.SendRedirect(c, rq, h.pageURL(c, rq, settingsPage, string(code)))
	}
	return err
}

// showCodes is the page that shows a set of recovery codes, once.
func (h *Handler) showCodes(c echo.Context, rq *web.Request, codes []string, cont, notice string) error {
	return web.Render(c, http.StatusOK, views.RecoveryCodesPage(views.RecoveryCodes{
		Page: h.kit.Page(c, rq, "TitleRecoveryCodes"), Codes: codes, ContinueURL: cont, Notice: notice,
	}))
}

// recentUser runs a settings change that checks a code itself (turning
// two-factor off) for a signed-in user who signed in recently
// (passkey.ReauthWindow); others sign in (again) first.
func (h *Handler) recentUser(next func(c echo.Context, rq *web.Request, u *models.User) error) web.Action {
	return h.signedIn(false, next)
}

// provenUser is recentUser for a change that checks no code (a new set of
// recovery codes): a user with two-factor on also needs a session that
// used it (twofactor.NeedsSecondFactor); one that did not goes to the
// step-up form, back to the settings once the code is right, and nothing
// changes until then.
func (h *Handler) provenUser(next func(c echo.Context, rq *web.Request, u *models.User) error) web.Action {
	return h.signedIn(true, next)
}

// signedIn is recentUser, and with proven provenUser.
func (h *Handler) signedIn(proven bool, next func(c echo.Context, rq *web.Request, u *models.User) error) web.Action {
	return func(c echo.Context, rq *web.Request) error {
		ctx := c.Request().Context()
		s, _, err := h.sessions.Read(ctx, c.Request())
		if err != nil {
			return web.TryLater("read the signed-in user", err)
		}
		if s == nil || h.now().Sub(s.Proven()) > h.reauth {
			return h.reauthFirst(c, rq)
		}
		u, err := h.accounts.SignedInUser(ctx, s.User.ID)
		if err != nil {
			return web.TryLater("read the signed-in user", err)
		}
		if proven {
			need, err := h.rules.NeedsSecondFactor(ctx, u.ID, s.Methods())
			if err != nil {
				return web.TryLater("read two-factor", err)
			}
			if need {
				h.log.Info("two-factor settings need a session that used the second factor", "user", u.ID, "request_id", web.RequestID(c))
				return h.kit.ToStepUp(c, rq, settingsPage)
			}
		}
		return next(c, rq, u)
	}
}

// postRecoveryCodes replaces the recovery codes and shows the new set.
func (h *Handler) postRecoveryCodes(c echo.Context, rq *web.Request, u *models.User) error {
	codes, err := h.rules.RegenerateRecoveryCodes(c.Request().Context(), u.ID)
	if errors.Is(err, twofactor.ErrNotOn) {
		return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(settingsPage)))
	}
	if err != nil {
		return err
	}
	h.log.Info("recovery codes replaced", "user", u.ID, "request_id", web.RequestID(c))
	h.accounts.TellTwoFactor(h.kit.MailContext(c, rq), u, accounts.RecoveryCodesReplaced, len(codes))
	return h.showCodes(c, rq, codes, h.base.URL(settingsPage), "RecoveryCodesRegeneratedNotice")
}

// postDisable turns two-factor off with a current code or a recovery
// code, unless the policy requires it for the user: then back to the
// settings with the reason, nothing spent (the admin's `users two-factor
// reset` is the way out).
func (h *Handler) postDisable(c echo.Context, rq *web.Request, u *models.User) error {
	err := h.rules.Disable(c.Request().Context(), u, rq.Form.Get("code"))
	if errors.Is(err, twofactor.ErrRequired) {
		h.log.Info("turning two-factor off refused: the policy requires it", "user", u.ID, "request_id", web.RequestID(c))
		return h.kit.SendRedirect(c, rq, h.pageURL(c, rq, settingsPage, errRequiredByPolicy))
	}
	if err != nil {
		err = stepFailure(err)
		code := signin.CodeOf(err)
		h.metrics.SecondStep(string(code))
		if code == signin.CodeCallback {
			return err
		}
		h.log.Warn("turning two-factor off refused", "code", string(code), "request_id", web.RequestID(c))
		return h.kit.SendRedirect(c, rq, h.pageURL(c, rq, settingsPage, string(code)))
	}
	h.log.Info("two-factor turned off", "user", u.ID, "request_id", web.RequestID(c))
	h.accounts.TellTwoFactor(h.kit.MailContext(c, rq), u, accounts.TwoFactorTurnedOff, 0)
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(settingsPage)+"?notice=disabled"))
}

// stepFailure is a two-factor rule's refusal as a signin code.
func stepFailure(err error) error { return signin.SecondFactorFailure(err) }
