package accountpages

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// passkeyMessage is the passkeys page's message id for its ?error= code.
func passkeyMessage(code string) string {
	switch code {
	case string(signin.CodeWebAuthnVerification):
		return "PasskeyAddFailed"
	case string(signin.CodeSessionRequired):
		return "PasskeyReauth"
	case "LastSignInMethod":
		return "PasskeyLastMethod"
	case "NotFound":
		return "PasskeyNotFound"
	case string(signin.CodeCallback), string(signin.CodeTryLater):
		// The server failed (the database, say): nothing was added.
		return "TryLater"
	}
	return ""
}

// withPasskeys answers the passkeys routes with next-auth's 400 "not
// supported" before request init when no webauthn provider is configured.
func (h *Handler) withPasskeys(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h.offers.PasskeyProvider == "" {
			return web.NotSupported
		}
		return next(c)
	}
}

// passkeysPage is the page's path, where signing in comes back to.
const passkeysPage = "/passkeys"

// getPasskeys is the signed-in user's passkeys page: add (with the script),
// rename and remove (plain forms).
func (h *Handler) getPasskeys(c echo.Context, rq *web.Request, uid string) error {
	id := h.offers.PasskeyProvider
	list, err := h.rules.ListPasskeys(c.Request().Context(), uid)
	if err != nil {
		return tryLater("list the passkeys", err)
	}
	d := views.Passkeys{
		Page:        h.kit.Page(c, rq, "TitlePasskeys"),
		CSRFToken:   rq.CSRFToken,
		OptionsURL:  h.base.URL("/webauthn-options/" + id),
		CallbackURL: h.base.URL("/callback/" + id),
		RenameURL:   h.base.URL("/passkeys/rename"),
		RemoveURL:   h.base.URL("/passkeys/remove"),
		Error:       passkeyMessage(c.QueryParam("error")),
	}
	d.Page.Script = h.base.Path + "/static/passkeys.js"
	if c.QueryParam("csrf") == "true" {
		d.Error = "RequestExpired"
	}
	if c.QueryParam("added") != "" {
		d.Notice = "PasskeyAddedNotice"
	}
	for _, k := range list {
		// ISO dates read the same in every language (no month names).
		item := views.PasskeyItem{ID: k.ID, Name: k.Name, Created: k.CreatedAt.UTC().Format(time.DateOnly), Synced: k.BackupEligible}
		if k.LastUsedAt != nil {
			item.LastUsed = k.LastUsedAt.UTC().Format("2006-01-02 15:04 UTC")
		}
		d.Items = append(d.Items, item)
	}
	return web.Render(c, http.StatusOK, views.PasskeysPage(d))
}

// postRenamePasskey renames one of the user's passkeys.
func (h *Handler) postRenamePasskey(c echo.Context, rq *web.Request, uid string) error {
	if err := h.rules.RenamePasskey(c.Request().Context(), uid, rq.Form.Get("id"), rq.Form.Get("name")); err != nil {
		return h.passkeysFailed(c, rq, "rename a passkey", err)
	}
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(passkeysPage)))
}

// postRemovePasskey removes one of the user's passkeys, unless it is their
// last way to sign in, for a session that may (accounts.Privileged: a
// recent sign-in, with the second factor once it is on); a signed-out
// browser is sent to sign in.
func (h *Handler) postRemovePasskey(c echo.Context, rq *web.Request) error {
	s, _, err := h.sessions.Read(c.Request().Context(), c.Request())
	switch {
	case err != nil:
		return web.TryLater("read the signed-in user", err)
	case s == nil:
		return h.kit.ToSignIn(c, rq, passkeysPage)
	}
	who := accounts.SignedIn{UserID: s.User.ID, Since: s.Proven(), Methods: s.Methods()}
	if err := h.rules.RemovePasskey(h.kit.MailContext(c, rq), who, rq.Form.Get("id")); err != nil { // the notice in the page's language
		return h.passkeysFailed(c, rq, "remove a passkey", err)
	}
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(passkeysPage)))
}

// passkeysFailed sends a refused rename or removal back to the page with
// its message, or a recent session without the second factor to the
// step-up form (as the two-factor settings do); anything else (the database failed at step what) is the
// "try again later" page, as the other account pages answer, with the
// cause logged once: nothing was changed.
func (h *Handler) passkeysFailed(c echo.Context, rq *web.Request, what string, err error) error {
	code := ""
	switch {
	case errors.Is(err, accounts.ErrStepUp): // recent, without the second factor (logged by the rule)
		return h.kit.ToStepUp(c, rq, passkeysPage)
	case errors.Is(err, accounts.ErrReauth):
		code = string(signin.CodeSessionRequired)
	case errors.Is(err, signin.ErrLastMethod):
		code = "LastSignInMethod"
	case errors.Is(err, accounts.ErrPasskeyNotFound):
		code = "NotFound"
	default:
		return tryLater(what, err)
	}
	h.log.Warn("passkey change refused", "reason", code)
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL(passkeysPage)+"?error="+code))
}
