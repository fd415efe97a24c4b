package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/views"
)

// accountMailer sends the password flows' e-mails through an e-mail
// provider's server and counts them against that provider's rate limits:
// an inbox gets one budget for sign-in links, sign-up and reset mails.
type accountMailer struct {
	link   linkMailer // its server, sender address and development fallback
	limits signin.Limiter
}

// newAccountMailer is the mailer of the first e-mail provider; ok is false
// when there is none, and then no flow that needs an e-mail is offered.
func (a *App) newAccountMailer() (accountMailer, bool) {
	for _, p := range a.cfg.Providers {
		ep, found := a.emails[p.ID]
		if !found {
			continue
		}
		m, isLink := ep.Mailer.(linkMailer)
		if !isLink {
			continue
		}
		return accountMailer{link: m, limits: ep.Limits}, true
	}
	return accountMailer{}, false
}

// send renders d and delivers it to an address, or without an SMTP server
// writes its link to the log (development only, as sign-in links).
func (m accountMailer) send(ctx context.Context, to string, d views.AccountEmail) error {
	if m.link.sender == nil {
		m.link.log.Warn("no SMTP server configured: account e-mail written to the log (development only)",
			"subject", d.Subject, "to", email.Mask(to), "url", d.URL)
		return nil
	}
	d.EmailColors = m.link.colors
	var text, html strings.Builder
	if err := views.AccountEmailText(d).Render(ctx, &text); err != nil {
		return fmt.Errorf("render e-mail text: %w", err)
	}
	if err := views.AccountEmailHTML(d).Render(ctx, &html); err != nil {
		return fmt.Errorf("render e-mail HTML: %w", err)
	}
	err := m.link.sender.Send(ctx, email.Message{
		From: m.link.from, To: to, Subject: d.Subject, Text: text.String(), HTML: html.String(),
	})
	if err != nil {
		m.link.metrics.EmailFailed()
		return fmt.Errorf("send account e-mail: %w", err)
	}
	m.link.metrics.EmailSent()
	return nil
}
