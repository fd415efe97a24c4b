package app

import (
	"context"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/i18n"
)

// langOf is the language a request's page is shown in, and the e-mail it
// sends written in: the lang parameter (query, or the form a page posted)
// when it names an offered language, else Accept-Language, else the
// default (config i18n). explicit is the parameter's language tag when the
// parameter decided, "" otherwise: forms and redirects carry it on. Only
// pages and mail-sending actions ask: GET /session and the JSON routes
// never pay for it.
func (a *App) langOf(c echo.Context, rq *request) (l *i18n.Lang, explicit string) {
	if l := a.explicitLang(c, rq); l != nil {
		return l, l.Tag()
	}
	return a.langs.Accept(c.Request().Header.Get("Accept-Language")), ""
}

// explicitLang is the offered language the request's lang parameter (query,
// else form) names, or nil.
func (a *App) explicitLang(c echo.Context, rq *request) *i18n.Lang {
	param := c.QueryParam("lang")
	if param == "" && rq != nil && rq.form != nil {
		param = rq.form.Get("lang")
	}
	l, _ := a.langs.Param(param)
	return l
}

// withLang is u, a redirect to one of latchkey's pages, with the request's
// explicit language added (a catalogue tag: nothing to escape), so the
// page the browser lands on keeps it. Without an explicit lang, u as it
// is: what a client that never sends lang (next-auth's) sees is
// next-auth's redirect.
func (a *App) withLang(c echo.Context, rq *request, u string) string {
	if l := a.explicitLang(c, rq); l != nil {
		return withQuery(u, url.Values{"lang": {l.Tag()}})
	}
	return u
}

// mailContext is the request's context carrying its language (langOf), for
// the e-mail an action sends.
func (a *App) mailContext(c echo.Context, rq *request) context.Context {
	l, _ := a.langOf(c, rq)
	return i18n.NewContext(c.Request().Context(), l)
}

// mailLang is the language mailContext put in ctx, or the default.
func (a *App) mailLang(ctx context.Context) *i18n.Lang {
	if l := i18n.FromContext(ctx); l != nil {
		return l
	}
	return a.langs.Default()
}
