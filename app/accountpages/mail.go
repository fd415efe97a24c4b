package accountpages

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// Mailer sends the account pages' e-mails through an e-mail provider's
// server (the first one's: the wiring picks it, and counts the e-mails
// against that provider's rate limits, so an inbox gets one budget for
// sign-in links, sign-up and reset mails).
type Mailer struct {
	Sender  email.Sender // nil: no SMTP server, the link goes to the log (development only)
	From    string
	Colors  views.EmailColors // the theme's
	Metrics *metrics.Metrics  // counts deliveries and failures; nil: off
	Log     *slog.Logger
}

// send renders d and delivers it to an address, or without an SMTP server
// writes its link to the log (development only, as sign-in links). kind
// names the mail in the log ("password reset").
func (m Mailer) send(ctx context.Context, to, kind string, d views.AccountEmail) error {
	if m.Sender == nil {
		m.Log.Warn("no SMTP server configured: "+kind+" e-mail written to the log (development only)",
			"subject", d.Subject, "to", email.Mask(to), "url", d.URL)
		return nil
	}
	d.EmailColors = m.Colors
	var text, html strings.Builder
	if err := views.AccountEmailText(d).Render(ctx, &text); err != nil {
		return fmt.Errorf("render e-mail text: %w", err)
	}
	if err := views.AccountEmailHTML(d).Render(ctx, &html); err != nil {
		return fmt.Errorf("render e-mail HTML: %w", err)
	}
	err := m.Sender.Send(ctx, email.Message{
		Kind: kind, From: m.From, To: to, Subject: d.Subject, Text: text.String(), HTML: html.String(),
	})
	if err != nil {
		m.Metrics.EmailFailed()
		return fmt.Errorf("send %s e-mail: %w", kind, err)
	}
	m.Metrics.EmailSent()
	return nil
}

// Mails is accounts.Mailer: the account e-mails rendered in the language
// ctx carries (web.Kit.MailContext), their links built from the tokens,
// delivered by m. Each link names the e-mail's language, so the page it
// opens speaks the language the e-mail was written in. offers says which
// pages an e-mail may point to.
func Mails(k *web.Kit, m Mailer, offers Offers) accounts.Mailer {
	return mails{kit: k, base: k.Base(), mailer: m, offers: offers}
}

type mails struct {
	kit    *web.Kit // the e-mail's language (MailLang)
	base   config.Base
	mailer Mailer
	offers Offers
}

// link is a flow's page with the link's token and the mail's language
// (the token is hex and the tag a catalogue's: nothing to escape).
func (m mails) link(ctx context.Context, page, token string) string {
	return m.base.URL(page) + "?token=" + token + "&lang=" + m.kit.MailLang(ctx).Tag()
}

// page is one of latchkey's pages in the mail's language.
func (m mails) page(ctx context.Context, page string) string {
	return m.base.URL(page) + "?lang=" + m.kit.MailLang(ctx).Tag()
}

func (m mails) host() string { return web.HostOf(m.base.Origin) }

func (m mails) SignUpLink(ctx context.Context, to, token string) error {
	return m.mailer.send(ctx, to, "sign-up", views.SignUpEmail(m.kit.MailLang(ctx), m.host(), m.link(ctx, "/signup/verify", token)))
}

func (m mails) SignUpExisting(ctx context.Context, to string) error {
	return m.mailer.send(ctx, to, "sign-up (existing account)", views.SignUpExistingEmail(m.kit.MailLang(ctx), m.host(), m.page(ctx, "/reset")))
}

func (m mails) ResetLink(ctx context.Context, to, token string) error {
	return m.mailer.send(ctx, to, "password reset", views.ResetEmail(m.kit.MailLang(ctx), m.host(), m.link(ctx, "/reset/confirm", token)))
}

func (m mails) ResetUnknown(ctx context.Context, to string) error {
	signUp := ""
	if !m.offers.signUpOff() {
		signUp = m.page(ctx, "/signup")
	}
	return m.mailer.send(ctx, to, "password reset (no account)", views.ResetUnknownEmail(m.kit.MailLang(ctx), m.host(), signUp))
}

func (m mails) MethodAdded(ctx context.Context, to, provider string) error {
	resetURL := ""
	if !m.offers.resetOff() {
		resetURL = m.page(ctx, "/reset")
	}
	return m.mailer.send(ctx, to, "sign-in method added", views.MethodAddedEmail(m.kit.MailLang(ctx), m.host(), provider, resetURL))
}

func (m mails) TwoFactorChanged(ctx context.Context, to string, event accounts.TwoFactorEvent, left int) error {
	l := m.kit.MailLang(ctx)
	switch event {
	case accounts.TwoFactorTurnedOn:
		return m.mailer.send(ctx, to, "two-factor on", views.TwoFactorOnEmail(l, m.host()))
	case accounts.TwoFactorTurnedOff:
		return m.mailer.send(ctx, to, "two-factor off", views.TwoFactorOffEmail(l, m.host()))
	case accounts.RecoveryCodesReplaced:
		return m.mailer.send(ctx, to, "recovery codes replaced", views.RecoveryCodesReplacedEmail(l, m.host()))
	default:
		return m.mailer.send(ctx, to, "recovery code used", views.RecoveryCodeUsedEmail(l, m.host(), left))
	}
}

func (m mails) MethodRemoved(ctx context.Context, to, provider string) error {
	return m.mailer.send(ctx, to, "sign-in method removed", views.MethodRemovedEmail(m.kit.MailLang(ctx), m.host(), provider))
}

func (m mails) PasskeyChanged(ctx context.Context, to string, added bool) error {
	l := m.kit.MailLang(ctx)
	if added {
		return m.mailer.send(ctx, to, "passkey added", views.PasskeyAddedEmail(l, m.host(), m.page(ctx, passkeysPage)))
	}
	return m.mailer.send(ctx, to, "passkey removed", views.PasskeyRemovedEmail(l, m.host()))
}

func (m mails) EmailChangeLink(ctx context.Context, to, token string) error {
	return m.mailer.send(ctx, to, "address change", views.EmailChangeLinkEmail(m.kit.MailLang(ctx), m.host(), m.link(ctx, "/account/email/confirm", token)))
}

func (m mails) EmailInUse(ctx context.Context, to string) error {
	return m.mailer.send(ctx, to, "address change (address in use)", views.EmailInUseEmail(m.kit.MailLang(ctx), m.host()))
}

func (m mails) EmailChanged(ctx context.Context, to, newAddr string) error {
	return m.mailer.send(ctx, to, "address changed", views.EmailChangedEmail(m.kit.MailLang(ctx), m.host(), newAddr))
}

func (m mails) AccountDeleted(ctx context.Context, to string) error {
	return m.mailer.send(ctx, to, "account deleted", views.AccountDeletedEmail(m.kit.MailLang(ctx), m.host()))
}
