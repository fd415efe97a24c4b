package openidprovider

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// deadLogout is the dead-link page of a logout request that does not open
// (forged, truncated, or older than openid.LogoutTTL).
func deadLogout(cause error) error { return deadLink("logout request", cause) }

// getLogout is where an application's logout request (end_session) hands
// the browser over. A browser signed in as the id_token_hint's subject is
// signed out at once (the application proved which session it means);
// any other signed-in browser is asked; one not signed in just goes on to
// the application's post-logout URI.
func (h *Handler) getLogout(c echo.Context, rq *web.Request) error {
	l, err := h.rules.OpenLogout(c.QueryParam("logout"))
	if err != nil {
		return deadLogout(err)
	}
	h.kit.HintLang(rq, l.UILocales)
	who, err := h.who(c)
	if err != nil {
		return web.TryLater("read session", err)
	}
	switch {
	case who == nil:
		return h.kit.SendRedirect(c, rq, l.RedirectURI)
	case l.UserID != "" && l.UserID == who.UserID:
		return h.signOut(c, rq, l, who)
	}
	name := ""
	if l.ClientID != "" {
		name = h.rules.ClientName(c.Request().Context(), l.ClientID)
	}
	return web.Render(c, http.StatusOK, views.OpenIDLogoutPage(views.OpenIDLogout{
		Page: h.kit.Page(c, rq, "TitleOpenIDLogout"), CSRFToken: rq.CSRFToken, ActionURL: h.base.URL(logoutPage),
		Logout: c.QueryParam("logout"), ClientName: name,
	}))
}

// postLogout is the answer of the logout page: sign out, or stay signed
// in; the browser goes on to the application either way.
func (h *Handler) postLogout(c echo.Context, rq *web.Request) error {
	l, err := h.rules.OpenLogout(rq.Form.Get("logout"))
	if err != nil {
		return deadLogout(err)
	}
	who, err := h.who(c)
	if err != nil {
		return web.TryLater("read session", err)
	}
	if who == nil || rq.Form.Get("decision") != "signout" {
		return h.kit.SendRedirect(c, rq, l.RedirectURI)
	}
	return h.signOut(c, rq, l, who)
}

// signOut ends the browser's latchkey session and the application's grant.
func (h *Handler) signOut(c echo.Context, rq *web.Request, l *openid.Logout, who *openid.Who) error {
	ctx := c.Request().Context()
	if err := h.sessions.Destroy(ctx, c.Response(), c.Request()); err != nil {
		return web.TryLater("end session", err)
	}
	if err := h.rules.LoggedOut(ctx, l, who.UserID); err != nil {
		h.log.ErrorContext(ctx, "openid: revoke the application's tokens at logout", "err", err)
	}
	return h.kit.SendRedirect(c, rq, l.RedirectURI)
}
