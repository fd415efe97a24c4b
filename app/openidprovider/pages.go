package openidprovider

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// gone is the page of an authorization request that is unknown, expired or
// complete (a bookmarked or replayed link): nothing happens.
func gone(cause error) error { return deadLink("authorization request", cause) }

// deadLink is the dead-link page (400) of the step what names in the log:
// a refusal, logged as a warning (web.Kit's logCause), not an error.
func deadLink(what string, cause error) error {
	return web.Notice(http.StatusBadRequest, views.PasswordNotice{Heading: "DeadLinkHeading", Lines: []string{"DeadLink"}}, what, cause)
}

// waiting reads the authorization request id (one still waiting: else the
// gone page) and the browser's session (nil: none).
func (h *Handler) waiting(c echo.Context, id string) (*openid.Pending, *openid.Who, error) {
	p, err := h.rules.Pending(c.Request().Context(), id)
	switch {
	case errors.Is(err, openid.ErrPendingGone):
		return nil, nil, gone(err)
	case err != nil:
		return nil, nil, web.TryLater("read authorization request", err)
	case p.Done:
		return nil, nil, gone(openid.ErrPendingGone)
	}
	who, err := h.who(c)
	if err != nil {
		return nil, nil, web.TryLater("read session", err)
	}
	return p, who, nil
}

// who is the browser's session as the rules need it; nil: none. A session
// without a sign-in time of its own (session.Session.Proven) is unproven.
func (h *Handler) who(c echo.Context) (*openid.Who, error) {
	s, _, err := h.sessions.Read(c.Request().Context(), c.Request())
	if err != nil || s == nil {
		return nil, err
	}
	return &openid.Who{UserID: s.User.ID, SignedIn: s.SignedIn, Methods: s.Methods(), Unproven: s.Proven().IsZero()}, nil
}

// getContinue is where an authorization request hands the browser over
// (the clients' LoginURL) and where it comes back after signing in: the
// rules say what is next — sign in (again), consent, or done, when the
// library's callback issues the code to the client.
func (h *Handler) getContinue(c echo.Context, rq *web.Request) error {
	ctx := c.Request().Context()
	p, who, err := h.waiting(c, c.QueryParam("id"))
	if err != nil {
		return err
	}
	h.kit.HintLang(rq, p.UILocales)
	step, err := h.rules.Next(ctx, p, who)
	if err != nil {
		return h.failed(c, rq, p.ID, err)
	}
	switch step {
	case openid.StepSignIn:
		return h.toSignIn(c, rq, p)
	case openid.StepConsent:
		return h.renderConsent(c, rq, p, who)
	}
	return h.toLibrary(c, rq, p.ID)
}

// getCallback is the library's callback, where the code is issued to the
// client's redirect URI, for the browser signed in as the user who
// completed the request only (openid.Service.CompletedBy); any other
// browser gets the gone page and nothing is used up.
func (h *Handler) getCallback(c echo.Context, _ *web.Request) error {
	who, err := h.who(c)
	if err != nil {
		return web.TryLater("read session", err)
	}
	switch err := h.rules.CompletedBy(c.Request().Context(), c.QueryParam("id"), who); {
	case errors.Is(err, openid.ErrPendingGone), errors.Is(err, openid.ErrOtherBrowser):
		return gone(err)
	case err != nil:
		return web.TryLater("read authorization request", err)
	}
	r := c.Request()
	h.lib.ServeHTTP(c.Response(), r.WithContext(context.WithValue(r.Context(), browserChecked{}, true)))
	return nil
}

// toLibrary sends the browser to the library's callback, which issues the
// code to the client's redirect URI.
func (h *Handler) toLibrary(c echo.Context, rq *web.Request, id string) error {
	return h.kit.SendRedirect(c, rq, web.WithQuery(h.base.URL(callbackPath), url.Values{"id": {id}}))
}

// failed answers a request the rules refused: an OAuth error (prompt=none's
// login_required, a denied consent) ends the request (openid.Service.Refused)
// and goes back to the client's redirect URI, as the protocol says;
// anything else is a page.
func (h *Handler) failed(c echo.Context, rq *web.Request, id string, err error) error {
	var oe *oidc.Error
	switch {
	case errors.Is(err, openid.ErrPendingGone):
		return gone(err)
	case errors.As(err, &oe):
		ar, lerr := h.rules.Refused(c.Request().Context(), id)
		switch {
		case errors.Is(lerr, openid.ErrPendingGone):
			return gone(lerr)
		case lerr != nil:
			return web.TryLater("end authorization request", lerr)
		}
		op.AuthRequestError(c.Response(), c.Request(), ar, oe, h.answers)
		return nil
	}
	return web.TryLater("continue authorization request", err)
}

// signInURL is latchkey's sign-in page, back to this request afterwards,
// without the request's lang: a redirect adds it (WithLang), a page's
// link gets it from the page (views.Page.Link).
func (h *Handler) signInURL(p *openid.Pending) string {
	back := web.WithQuery(h.base.URL(continuePage), url.Values{"id": {p.ID}})
	q := url.Values{"callbackUrl": {back}}
	if p.LoginHint != "" {
		q.Set("email", p.LoginHint) // the sign-in page's e-mail fields start with it
	}
	return web.WithQuery(h.base.URL("/signin"), q)
}

func (h *Handler) renderConsent(c echo.Context, rq *web.Request, p *openid.Pending, who *openid.Who) error {
	lines := views.ScopeLines(p.Scopes)
	account, err := h.rules.AccountName(c.Request().Context(), who.UserID)
	if err != nil {
		return web.TryLater("read user", err)
	}
	return web.Render(c, http.StatusOK, views.OpenIDConsentPage(views.OpenIDConsent{
		Page: h.kit.Page(c, rq, "TitleOpenIDConsent"), CSRFToken: rq.CSRFToken, ActionURL: h.base.URL(consentPath),
		RequestID: p.ID, ClientName: p.Client.DisplayName(), ClientHost: p.ClientHost, Scopes: lines,
		Account: account, ShownTo: who.UserID, SwitchURL: h.signInURL(p),
	}))
}

// postConsent records the decision of the consent page. A page shown to
// another user than the browser's now (its user field) is shown again,
// for this one: nothing is granted or refused.
func (h *Handler) postConsent(c echo.Context, rq *web.Request) error {
	ctx := c.Request().Context()
	p, who, err := h.waiting(c, rq.Form.Get("id"))
	if err != nil {
		return err
	}
	h.kit.HintLang(rq, p.UILocales)
	switch err := h.rules.Consent(ctx, p, who, rq.Form.Get("user"), rq.Form.Get("decision") == "allow"); {
	case errors.Is(err, openid.ErrSignInFirst):
		return h.toSignIn(c, rq, p)
	case errors.Is(err, openid.ErrOtherUser):
		h.log.WarnContext(ctx, "openid: consent page shown to another user; shown again", "request", p.ID)
		return h.consentMismatch(c, rq)
	case err != nil:
		return h.failed(c, rq, p.ID, err)
	}
	return h.toLibrary(c, rq, p.ID)
}

// toSignIn sends the browser to sign in (again) for the request, noting
// when it did so (openid.Service.Next: the sign-in that follows is fresh).
func (h *Handler) toSignIn(c echo.Context, rq *web.Request, p *openid.Pending) error {
	if err := h.rules.AskedLogin(c.Request().Context(), p); err != nil {
		return web.TryLater("note sign-in asked", err)
	}
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, h.signInURL(p)))
}

// consentMismatch: a consent posted without a matching csrfToken goes
// back to the request, which shows the page again (in the form's lang).
func (h *Handler) consentMismatch(c echo.Context, rq *web.Request) error {
	return h.kit.SendRedirect(c, rq, h.kit.WithLang(c, rq, web.WithQuery(h.base.URL(continuePage), url.Values{"id": {rq.Form.Get("id")}})))
}
