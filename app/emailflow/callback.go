package emailflow

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// codeMissingToken is the lower-case code next-auth v4 redirects to for a
// link without a token (it renders the 500 "Server error" page).
const codeMissingToken signin.Code = "configuration"

// Callback (GET or POST /callback/:provider) redeems a magic link. GET is the link itself: in the
// browser that asked for it (its binding cookie) it signs in at once, as
// next-auth does; anywhere else, or with confirm: true everywhere, it shows
// the confirm page (signin.OpenLink). That page's POST has passed the
// route's CSRF check, so it is a click in the browser showing the page, and
// it signs in. HEAD never gets here (the router answers 400), so scanners
// probing links with HEAD spend nothing; neither does any GET without the
// binding.
func (h *Handler) Callback(c echo.Context, rq *web.Request, p config.Provider) error {
	ctx, r := c.Request().Context(), c.Request()
	post := r.Method == http.MethodPost
	params := c.QueryParams()
	if post {
		params = rq.Form
	}
	token := params.Get("token")
	if token == "" {
		return signin.Fail(codeMissingToken, errors.New("e-mail callback without a token"))
	}
	var out *signin.SignedIn
	var err error
	if post {
		out, err = h.core.RedeemLink(ctx, h.browser(c), p.ID, token, params.Get("email"))
	} else {
		var pending *signin.PendingLink
		out, pending, err = h.core.OpenLink(ctx, h.browser(c), signin.OpenedLink{
			Provider: p.ID, Token: token, Email: params.Get("email"),
			Bound: h.bindings.bound(r, h.now()), Confirm: p.Confirm,
		})
		if err == nil && pending != nil {
			return h.renderConfirm(c, rq, p, token, pending.Identifier, http.StatusOK, "")
		}
	}
	if err != nil {
		return err
	}
	// The spent link's binding goes; a failure here only leaves an entry
	// that matches nothing and expires with the link.
	if err := h.bindings.drop(c.Response(), r, out.LinkHash, h.now()); err != nil {
		logs.RequestFailed(h.log, slog.LevelWarn, err, "spent link's binding not removed", "provider", p.ID, "err", err)
	}
	return h.kit.AfterSignIn(c, rq, out)
}

// confirmPage shows a link's page again after its POST failed the CSRF
// check (403). The address is the one stored with the token, looked up
// without spending it; for a dead token the page names none (its button
// then leads to the Verification error).
func (h *Handler) confirmPage(c echo.Context, rq *web.Request, p config.Provider, params url.Values, status int, msg string) error {
	token := params.Get("token")
	if token == "" {
		return signin.Fail(codeMissingToken, errors.New("e-mail callback without a token"))
	}
	identifier := ""
	if link, err := h.core.LookUpLink(c.Request().Context(), token); err == nil {
		identifier = link.Identifier
	}
	return h.renderConfirm(c, rq, p, token, identifier, status, msg)
}

// renderConfirm is the page with the "Sign in" button for a link. It names
// the address stored with the token (identifier), never the link's email
// parameter: whoever sent the link chose that parameter, and the page is
// what tells a person lured to someone else's link whose account the
// button signs into.
func (h *Handler) renderConfirm(c echo.Context, rq *web.Request, p config.Provider, token, identifier string, status int, msg string) error {
	// render makes it no-store; every response is already no-referrer.
	return web.Render(c, status, views.ConfirmSignInPage(views.ConfirmSignIn{
		Page:        h.kit.Page(c, rq, "TitleSignIn"),
		Action:      h.base.URL("/callback/" + p.ID),
		CSRFToken:   rq.CSRFToken,
		Token:       token,
		Email:       identifier,
		CallbackURL: rq.CallbackURL,
		Host:        web.HostOf(h.base.Origin),
		Error:       msg,
	}))
}
