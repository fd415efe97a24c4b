package accountcentre

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// postChangeEmail is POST {base}/change-email (email): for a privileged
// session (accounts.Service.Privileged), a link to the new address; the same answer whether or not the
// address has an account.
func (h *Handler) postChangeEmail(c echo.Context, rq *web.Request, u user) error {
	err := h.rules.StartEmailChange(h.kit.MailContext(c, rq), u.who, u.User, rq.Form.Get("email"), c.RealIP())
	if err != nil {
		return h.refuse(c, rq, "an e-mail change", err)
	}
	return h.done(c, rq, nil, "EmailChangeSent")
}

// getEmailChange is GET {base}/account/email/confirm?token=…: the change
// link's page. Opening it changes nothing (mail scanners open links); its
// button does.
func (h *Handler) getEmailChange(c echo.Context, rq *web.Request) error {
	token := c.QueryParam("token")
	addr, err := h.rules.PendingEmailChange(c.Request().Context(), token)
	msg, status := "", http.StatusOK
	if errors.Is(err, accounts.ErrDeadLink) {
		msg, status, token = "EmailChangeDeadLink", http.StatusGone, "" // no button for a dead link
	} else if err != nil {
		return err
	}
	return h.renderEmailChange(c, rq, token, addr, msg, status)
}

func (h *Handler) renderEmailChange(c echo.Context, rq *web.Request, token, addr, msg string, status int) error {
	return web.Render(c, status, views.EmailChangeConfirmPage(views.EmailChangeConfirm{
		Page: h.kit.Page(c, rq, "TitleEmailChange"), CSRFToken: rq.CSRFToken, ActionURL: h.base.URL(emailChangePage),
		Token: token, NewEmail: addr, Error: msg,
	}))
}

// postEmailChange spends the link and moves the account to its address.
func (h *Handler) postEmailChange(c echo.Context, rq *web.Request) error {
	token := rq.Form.Get("token")
	_, err := h.rules.ApplyEmailChange(h.kit.MailContext(c, rq), h.browser(c), token)
	if err != nil {
		if _, ok := refusalOf(err); !ok {
			return err
		}
		r, _ := refusalOf(err)
		h.log.Info("account page: an e-mail change refused", "code", r.code, "cause", err.Error(), "request_id", web.RequestID(c))
		if wantsJSON(c, rq) {
			web.NoStore(c)
			return c.JSON(r.status, map[string]string{"error": r.code})
		}
		return h.renderEmailChange(c, rq, "", "", r.message, r.status)
	}
	return h.done(c, rq, nil, "EmailChanged")
}

// emailChangeRetry shows the link's page again after a CSRF mismatch.
func (h *Handler) emailChangeRetry(c echo.Context, rq *web.Request) error {
	token := rq.Form.Get("token")
	addr, err := h.rules.PendingEmailChange(c.Request().Context(), token)
	if err != nil {
		return h.renderEmailChange(c, rq, "", "", "EmailChangeDeadLink", http.StatusForbidden)
	}
	return h.renderEmailChange(c, rq, token, addr, "", http.StatusForbidden)
}

// postDelete is POST {base}/delete-user (confirm): for a privileged
// session (accounts.Service.Privileged) and with the typed confirmation, the account and everything that is its own
// go, and the browser is signed out.
func (h *Handler) postDelete(c echo.Context, rq *web.Request, u user) error {
	err := h.rules.DeleteAccount(h.kit.MailContext(c, rq), h.browser(c), u.who, u.User, rq.Form.Get("confirm"))
	if err != nil {
		return h.refuse(c, rq, "deleting the account", err)
	}
	if wantsJSON(c, rq) {
		web.NoStore(c)
		return c.JSON(http.StatusOK, map[string]any{"ok": true})
	}
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.base.URL("/signin")))
}
