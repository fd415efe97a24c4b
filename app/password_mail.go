package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/emailflow"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// accountMailer sends the password flows' e-mails through an e-mail
// provider's server and counts them against that provider's rate limits:
// an inbox gets one budget for sign-in links, sign-up and reset mails.
type accountMailer struct {
	link   emailflow.Mailer // its server, sender address and development fallback
	limits signin.Limiter
}

// newAccountMailer is the mailer of the first e-mail provider; ok is false
// when there is none, and then no flow that needs an e-mail is offered.
func newAccountMailer(emails *emailflow.Handler) (accountMailer, bool) {
	m, limits, ok := emails.AccountMailer()
	return accountMailer{link: m, limits: limits}, ok
}

// send renders d and delivers it to an address, or without an SMTP server
// writes its link to the log (development only, as sign-in links).
func (m accountMailer) send(ctx context.Context, to string, d views.AccountEmail) error {
	if m.link.Sender == nil {
		m.link.Log.Warn("no SMTP server configured: account e-mail written to the log (development only)",
			"subject", d.Subject, "to", email.Mask(to), "url", d.URL)
		return nil
	}
	d.EmailColors = m.link.Colors
	var text, html strings.Builder
	if err := views.AccountEmailText(d).Render(ctx, &text); err != nil {
		return fmt.Errorf("render e-mail text: %w", err)
	}
	if err := views.AccountEmailHTML(d).Render(ctx, &html); err != nil {
		return fmt.Errorf("render e-mail HTML: %w", err)
	}
	err := m.link.Sender.Send(ctx, email.Message{
		From: m.link.From, To: to, Subject: d.Subject, Text: text.String(), HTML: html.String(),
	})
	if err != nil {
		m.link.Metrics.EmailFailed()
		return fmt.Errorf("send account e-mail: %w", err)
	}
	m.link.Metrics.EmailSent()
	return nil
}

// accountMails is accounts.Mailer: the account e-mails rendered in the
// language ctx carries (mailContext), their links built from the tokens,
// delivered by the account mailer. Each link names the e-mail's language,
// so the page it opens speaks the language the e-mail was written in.
type accountMails struct{ a *App }

// link is a flow's page with the link's token and the mail's language
// (the token is hex and the tag a catalogue's: nothing to escape).
func (m accountMails) link(ctx context.Context, page, token string) string {
	return m.a.base.URL(page) + "?token=" + token + "&lang=" + m.a.kit.MailLang(ctx).Tag()
}

func (m accountMails) send(ctx context.Context, to string, d views.AccountEmail) error {
	return m.a.pw.mail.send(ctx, to, d)
}

func (m accountMails) host() string { return web.HostOf(m.a.base.Origin) }

func (m accountMails) SignUpLink(ctx context.Context, to, token string) error {
	return m.send(ctx, to, views.SignUpEmail(m.a.kit.MailLang(ctx), m.host(), m.link(ctx, "/signup/verify", token)))
}

func (m accountMails) SignUpExisting(ctx context.Context, to string) error {
	return m.send(ctx, to, views.SignUpExistingEmail(m.a.kit.MailLang(ctx), m.host(), m.a.base.URL("/reset")))
}

func (m accountMails) ResetLink(ctx context.Context, to, token string) error {
	return m.send(ctx, to, views.ResetEmail(m.a.kit.MailLang(ctx), m.host(), m.link(ctx, "/reset/confirm", token)))
}

func (m accountMails) ResetUnknown(ctx context.Context, to string) error {
	signUp := ""
	if !m.a.signUpOff() {
		signUp = m.a.base.URL("/signup")
	}
	return m.send(ctx, to, views.ResetUnknownEmail(m.a.kit.MailLang(ctx), m.host(), signUp))
}

func (m accountMails) MethodAdded(ctx context.Context, to, provider string) error {
	resetURL := ""
	if !m.a.resetOff() {
		resetURL = m.a.base.URL("/reset") + "?lang=" + m.a.kit.MailLang(ctx).Tag()
	}
	return m.send(ctx, to, views.MethodAddedEmail(m.a.kit.MailLang(ctx), m.host(), provider, resetURL))
}
