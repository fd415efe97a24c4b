package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// emailSignIn sends a magic link (the core's SendLink), binds it to this
// browser (so that here, and only here, opening it signs in at once) and
// sends the browser to verify-request.
func (a *App) emailSignIn(c echo.Context, rq *web.Request, p config.Provider) error {
	ep, ok := a.emails[p.ID]
	if !ok {
		return signin.Failf(signin.CodeEmailSignin, "e-mail provider %s is not set up", p.ID)
	}
	sent, err := a.core.SendLink(a.kit.MailContext(c, rq), ep, signin.LinkRequest{
		Email:       rq.Form.Get("email"),
		ClientIP:    c.RealIP(),
		CallbackURL: rq.CallbackURL,
	})
	if err != nil {
		return err
	}
	if err := a.bindings.add(c.Response(), c.Request(), sent.TokenHash, sent.Expires, a.now()); err != nil {
		// The link is on its way and works without the binding (through
		// the confirm page); failing the request now would only confuse.
		a.log.Warn("sign-in link not bound to the browser", "provider", p.ID, "err", err)
	}
	q := url.Values{"provider": {p.ID}, "type": {config.TypeEmail}}
	if l := a.kit.ExplicitLang(c, rq); l != nil {
		q.Set("lang", l.Tag())
	}
	return a.kit.SendRedirect(c, rq, a.base.URL("/verify-request")+"?"+q.Encode())
}

// linkMailer renders the sign-in e-mail from the views (views/email.templ,
// where operators change its wording) and sends it, or without an SMTP
// server writes the link to the log: the one place a link is ever logged,
// and only in development.
type linkMailer struct {
	provider string
	sender   email.Sender // nil: no server configured
	from     string
	host     string // the service's host, named in the e-mail
	log      *slog.Logger
	metrics  *metrics.Metrics  // counts deliveries and failures
	colors   views.EmailColors // the theme's (theme.go)
	// lang is the e-mail's language when the context carries none
	// (i18n.NewContext): the configured default.
	lang *i18n.Lang
}

func (m linkMailer) SendLink(ctx context.Context, to, link string) error {
	if m.sender == nil {
		m.log.Warn("no SMTP server configured: sign-in link written to the log (development only)",
			"provider", m.provider, "to", email.Mask(to), "url", link)
		return nil
	}
	d := views.SignInEmail{URL: link, Host: m.host, EmailColors: m.colors, Lang: i18n.FromContext(ctx)}
	if d.Lang == nil {
		d.Lang = m.lang
	}
	var text, html strings.Builder
	if err := views.SignInEmailText(d).Render(ctx, &text); err != nil {
		return fmt.Errorf("render e-mail text: %w", err)
	}
	if err := views.SignInEmailHTML(d).Render(ctx, &html); err != nil {
		return fmt.Errorf("render e-mail HTML: %w", err)
	}
	err := m.sender.Send(ctx, email.Message{
		From:    m.from,
		To:      to,
		Subject: views.SignInEmailSubject(d),
		Text:    text.String(),
		HTML:    html.String(),
	})
	if err != nil {
		m.metrics.EmailFailed()
		return err
	}
	m.metrics.EmailSent()
	return nil
}
