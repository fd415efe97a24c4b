package app

import (
	"errors"
	"net/http"
	"net/url"
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
	}
	return ""
}

// passkeysProvider is the first webauthn provider: the passkeys page's.
func (a *App) passkeysProvider() (string, bool) {
	for _, p := range a.cfg.Providers {
		if _, ok := a.passkeys.rps[p.ID]; ok {
			return p.ID, true
		}
	}
	return "", false
}

// withPasskeys answers the passkeys routes with next-auth's 400 "not
// supported" before request init when no webauthn provider is configured.
func (a *App) withPasskeys(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(a.passkeys.rps) == 0 {
			return echo.NewHTTPError(http.StatusNotFound)
		}
		return next(c)
	}
}

// passkeysUser is the signed-in user of a passkeys page request, or an
// answer that sends the browser to sign in first.
func (a *App) passkeysUser(c echo.Context, rq *web.Request) (string, error) {
	uid, err := a.browser(c).SignedInUser(c.Request().Context())
	if err != nil || uid == "" {
		to := a.base.URL("/signin") + "?" + url.Values{"callbackUrl": {a.base.URL("/passkeys")}}.Encode()
		return "", a.kit.SendRedirect(c, rq, a.kit.WithLang(c, rq, to))
	}
	return uid, nil
}

// getPasskeys is the signed-in user's passkeys page: add (with the script),
// rename and remove (plain forms).
func (a *App) getPasskeys(c echo.Context, rq *web.Request) error {
	id, _ := a.passkeysProvider()
	uid, err := a.passkeysUser(c, rq)
	if uid == "" {
		return err
	}
	list, err := a.pw.rules.ListPasskeys(c.Request().Context(), uid)
	if err != nil {
		return err
	}
	d := views.Passkeys{
		Page:        a.kit.Page(c, rq, "TitlePasskeys"),
		CSRFToken:   rq.CSRFToken,
		OptionsURL:  a.base.URL("/webauthn-options/" + id),
		CallbackURL: a.base.URL("/callback/" + id),
		RenameURL:   a.base.URL("/passkeys/rename"),
		RemoveURL:   a.base.URL("/passkeys/remove"),
		Error:       passkeyMessage(c.QueryParam("error")),
	}
	d.Page.Script = a.base.Path + "/static/passkeys.js"
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
func (a *App) postRenamePasskey(c echo.Context, rq *web.Request) error {
	uid, err := a.passkeysUser(c, rq)
	if uid == "" {
		return err
	}
	if err := a.pw.rules.RenamePasskey(c.Request().Context(), uid, rq.Form.Get("id"), rq.Form.Get("name")); err != nil {
		return a.passkeysFailed(c, rq, err)
	}
	return a.kit.SendRedirect(c, rq, a.kit.WithLang(c, rq, a.base.URL("/passkeys")))
}

// postRemovePasskey removes one of the user's passkeys, unless it is their
// last way to sign in.
func (a *App) postRemovePasskey(c echo.Context, rq *web.Request) error {
	uid, err := a.passkeysUser(c, rq)
	if uid == "" {
		return err
	}
	if err := a.pw.rules.RemovePasskey(c.Request().Context(), uid, rq.Form.Get("id")); err != nil {
		return a.passkeysFailed(c, rq, err)
	}
	return a.kit.SendRedirect(c, rq, a.kit.WithLang(c, rq, a.base.URL("/passkeys")))
}

// passkeysFailed sends a refused rename or removal back to the page with
// its message; anything else is the server's problem.
func (a *App) passkeysFailed(c echo.Context, rq *web.Request, err error) error {
	code := ""
	switch {
	case errors.Is(err, signin.ErrLastMethod):
		code = "LastSignInMethod"
	case errors.Is(err, accounts.ErrPasskeyNotFound):
		code = "NotFound"
	default:
		return err
	}
	a.log.Warn("passkey change refused", "reason", code)
	return a.kit.SendRedirect(c, rq, a.kit.WithLang(c, rq, a.base.URL("/passkeys")+"?error="+code))
}
