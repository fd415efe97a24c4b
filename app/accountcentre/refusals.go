package accountcentre

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/web"
)

// A refusal's code (the JSON body's "error", the page's ?error=), status
// and page message. Each is logged once with its cause; none changed
// anything.
type refusal struct {
	code    string
	status  int
	message string // views/locales id
}

var refusals = []struct {
	err error
	refusal
}{
	{accounts.ErrReauth, refusal{"SessionRequired", http.StatusForbidden, "AccountReauth"}},
	{accounts.ErrLastMethod, refusal{"LastSignInMethod", http.StatusConflict, "LastSignInMethod"}},
	{accounts.ErrNotFound, refusal{"NotFound", http.StatusNotFound, "SessionNotFound"}},
	{accounts.ErrNoSuchMethod, refusal{"NotFound", http.StatusNotFound, "LinkedAccountNotFound"}},
	{accounts.ErrSelfDeleteOff, refusal{"AccessDenied", http.StatusForbidden, "SelfDeleteOff"}},
	{accounts.ErrDeleteConfirm, refusal{"DeleteConfirmation", http.StatusBadRequest, "DeleteConfirmation"}},
	{accounts.ErrBadAddress, refusal{"BadAddress", http.StatusBadRequest, "BadAddress"}},
	{accounts.ErrNothingToChange, refusal{"BadAddress", http.StatusBadRequest, "SameEmail"}},
	{accounts.ErrRateLimited, refusal{"RateLimited", http.StatusTooManyRequests, "RateLimited"}},
	{accounts.ErrDeadLink, refusal{"Verification", http.StatusGone, "EmailChangeDeadLink"}},
	{accounts.ErrAddressTaken, refusal{"EmailTaken", http.StatusConflict, "EmailTaken"}},
	{errAppNotFound, refusal{"NotFound", http.StatusNotFound, "AppNotFound"}},
}

// refusalOf is err's refusal; false for a failure (the database, the mail
// server), which goes to the kit's failure adapter.
func refusalOf(err error) (refusal, bool) {
	for _, r := range refusals {
		if errors.Is(err, r.err) {
			return r.refusal, true
		}
	}
	return refusal{}, false
}

// refuse answers err: its code as JSON with its status, or back to the
// page with its message (?error= carries the message id, which the page
// checks against this table); anything else through the kit. A recent
// session that must prove its second factor first (accounts.ErrStepUp,
// logged by the rule) goes to the step-up form, which returns to the
// page; JSON gets SessionRequired with the form's address in url, as the
// passkey options do.
func (h *Handler) refuse(c echo.Context, rq *web.Request, what string, err error) error {
	if errors.Is(err, accounts.ErrStepUp) {
		if wantsJSON(c, rq) {
			web.NoStore(c)
			return c.JSON(http.StatusForbidden, map[string]string{"error": "SessionRequired", "url": h.kit.StepUpURL(c, rq, page)})
		}
		return h.kit.ToStepUp(c, rq, page)
	}
	r, ok := refusalOf(err)
	if !ok {
		return err
	}
	h.log.Info("account page: "+what+" refused", "code", r.code, "cause", err.Error(), "request_id", web.RequestID(c))
	if wantsJSON(c, rq) || c.Request().Method == http.MethodGet {
		web.NoStore(c)
		return c.JSON(r.status, map[string]string{"error": r.code})
	}
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(page)+"?error="+r.message))
}

// pageError is the page's ?error=, which a refusal set to its message
// id: only those are shown.
func pageError(id string) string {
	for _, r := range refusals {
		if r.message == id {
			return id
		}
	}
	return ""
}
