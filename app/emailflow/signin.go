package emailflow

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
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// SignIn (POST /signin/:provider, CSRF checked) sends a magic link (the core's SendLink), binds it to this
// browser (so that here, and only here, opening it signs in at once) and
// sends the browser to verify-request.
func (h *Handler) SignIn(c echo.Context, rq *web.Request, p config.Provider) error {
	ep, ok := h.providers[p.ID]
	if !ok {
		return signin.Failf(signin.CodeEmailSignin, "e-mail provider %s is not set up", p.ID)
	}
	explicit := h.kit.ExplicitLang(c, rq)
	in := signin.LinkRequest{Email: rq.Form.Get("email"), ClientIP: c.RealIP(), CallbackURL: rq.CallbackURL}
	if explicit != nil {
		in.Lang = explicit.Tag()
	}
	sent, err := h.core.SendLink(h.kit.MailContext(c, rq), ep, in)
	if err != nil {
		return err
	}
	if err := h.bindings.add(c.Response(), c.Request(), sent.TokenHash, sent.Expires, h.now()); err != nil {
		// The link is on its way and works without the binding (through
		// the confirm page); failing the request now would only confuse.
		logs.RequestFailed(h.log, slog.LevelWarn, err, "sign-in link not bound to the browser", "provider", p.ID, "err", err)
	}
	q := url.Values{"provider": {p.ID}, "type": {config.TypeEmail}}
	if explicit != nil {
		q.Set("lang", explicit.Tag())
	}
	return h.kit.SendRedirect(c, rq, h.base.URL("/verify-request")+"?"+q.Encode())
}

// Mailer renders the sign-in e-mail from the views (views/email.templ,
// where operators change its wording) and sends it, or without an SMTP
// server writes the link to the log: the one place a link is ever logged,
// and only in development. The account pages' e-mails go through the
// first provider's server too (Handler.AccountMailer): its exported
// fields are what they share.
type Mailer struct {
	provider string
	Sender   email.Sender // nil: no server configured
	From     string
	host     string // the service's host, named in the e-mail
	Log      *slog.Logger
	Metrics  *metrics.Metrics  // counts deliveries and failures
	Colors   views.EmailColors // the theme's
	// lang is the e-mail's language when the context carries none
	// (i18n.NewContext): the configured default.
	lang *i18n.Lang
}

// SendLink is signin.Mailer: the sign-in e-mail with link, to an address.
func (m Mailer) SendLink(ctx context.Context, to, link string) error {
	if m.Sender == nil {
		m.Log.Warn("no SMTP server configured: sign-in link written to the log (development only)",
			"provider", m.provider, "to", email.Mask(to), "url", link)
		return nil
	}
	d := views.SignInEmail{URL: link, Host: m.host, EmailColors: m.Colors, Lang: i18n.FromContext(ctx)}
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
	err := m.Sender.Send(ctx, email.Message{
		Kind:    "sign-in",
		From:    m.From,
		To:      to,
		Subject: views.SignInEmailSubject(d),
		Text:    text.String(),
		HTML:    html.String(),
	})
	if err != nil {
		m.Metrics.EmailFailed()
		return err
	}
	m.Metrics.EmailSent()
	return nil
}
