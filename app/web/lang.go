package web

import (
	"context"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/i18n"
)

// LangOf is the language a request's page is shown in, and the e-mail it
// sends written in: the lang parameter (query, or the form a page posted)
// when it names an offered language, else Accept-Language, else the
// default (config i18n). explicit is the parameter's language tag when the
// parameter decided, "" otherwise: forms and redirects carry it on. Only
// pages and mail-sending actions ask: GET /session and the JSON routes
// never pay for it.
func (k *Kit) LangOf(c echo.Context, rq *Request) (l *i18n.Lang, explicit string) {
	if l := k.ExplicitLang(c, rq); l != nil {
		return l, l.Tag()
	}
	return k.langs.Accept(c.Request().Header.Get("Accept-Language")), ""
}

// ExplicitLang is the offered language the request's lang parameter (query,
// else form) names, or nil.
func (k *Kit) ExplicitLang(c echo.Context, rq *Request) *i18n.Lang {
	param := c.QueryParam("lang")
	if param == "" && rq != nil && rq.Form != nil {
		param = rq.Form.Get("lang")
	}
	if param == "" && rq != nil {
		param = rq.LangHint
	}
	l, _ := k.langs.Param(param)
	return l
}

// HintLang makes the first offered language of hints (OpenID Connect's
// ui_locales: tags in order of preference, space-separated; §3.1.2.1) the
// request's language when it has no lang parameter: its page is shown in
// it and its forms and redirects carry it on, as a lang parameter would be.
// A lang parameter still wins: it is the user's own choice, made on a page
// (or carried on from one). Nothing offered in hints: nothing changes.
func (k *Kit) HintLang(rq *Request, hints string) {
	if l, ok := k.langs.FirstOf(hints); ok {
		rq.LangHint = l.Tag()
	}
}

// WithLang is u, a redirect to one of latchkey's pages, with the request's
// explicit language added (a catalogue tag: nothing to escape), so the
// page the browser lands on keeps it. Without an explicit lang, u as it
// is: what a client that never sends lang (next-auth's) sees is
// next-auth's redirect.
func (k *Kit) WithLang(c echo.Context, rq *Request, u string) string {
	if l := k.ExplicitLang(c, rq); l != nil {
		return WithQuery(u, url.Values{"lang": {l.Tag()}})
	}
	return u
}

// KeepLang is callback, the URL the browser returns to after signing in,
// with the request's lang parameter when it is one of latchkey's own pages
// (an OpenID authorization request's continue page, the account pages): a
// language the user chose on the sign-in page outlives the sign-in, and
// wins over the one the page would pick (ui_locales, Accept-Language).
// Other URLs, and requests without lang (next-auth's), keep callback as
// it is.
func (k *Kit) KeepLang(c echo.Context, rq *Request, callback string) string {
	l := k.ExplicitLang(c, rq)
	if l == nil || !strings.HasPrefix(callback, k.base.URL("/")) {
		return callback
	}
	u, err := url.Parse(callback)
	if err != nil {
		return callback
	}
	q := u.Query()
	if q.Get("lang") == l.Tag() {
		return callback
	}
	q.Set("lang", l.Tag())
	u.RawQuery = q.Encode()
	return u.String()
}

// MailContext is the request's context carrying its language (LangOf),
// for the e-mail an action sends.
func (k *Kit) MailContext(c echo.Context, rq *Request) context.Context {
	l, _ := k.LangOf(c, rq)
	return i18n.NewContext(c.Request().Context(), l)
}

// MailLang is the language MailContext put in ctx, or the default.
func (k *Kit) MailLang(ctx context.Context) *i18n.Lang {
	if l := i18n.FromContext(ctx); l != nil {
		return l
	}
	return k.langs.Default()
}
