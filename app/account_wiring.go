package app

import (
	"github.com/latchkey-auth/latchkey/app/accountpages"
	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/emailflow"
	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// buildAccountPages builds the account rules (app/accounts) over the store
// and the sign-in core, and the account pages' handler
// (app/accountpages) over them. The rules are shared: the passkey flow
// asks them who registers, the OAuth flow tells a link through the
// handler's TellMethodAdded. The first e-mail provider's server, sender
// and rate limits send their e-mails (mail.AccountMailer); without one no
// page that needs an e-mail is offered.
func (a *App) buildAccountPages(mail *emailflow.Handler) (*accounts.Service, *accountpages.Handler) {
	p, ok := a.cfg.Credentials()
	offers := accountpages.Offers{Passwords: ok, SignUp: ok && p.SignupEnabled()}
	offers.PasskeyProvider = a.passkeys.First()
	mailer, limits, canMail := mail.AccountMailer()
	offers.Mail = canMail
	rules := &accounts.Service{
		Store:    a.store,
		Core:     a.core,
		Hooks:    a.hooks,
		Provider: p.ID,
		Offered:  accounts.Offered{Passwords: ok, Email: mail.Offered(), Passkeys: offers.PasskeyProvider != ""},
		Hasher:   a.hasher,
		Policy:   password.NewPolicy(),
		// Wrong passwords typed on the account pages count in the password
		// sign-in's buckets: guessing there is guessing at sign-in.
		Throttle:      signin.NewThrottle(a.store),
		Limits:        limits,
		Hashes:        func(v string) []string { return email.HashTokens(v, a.cfg.Secrets()) },
		SessionsEnded: a.sessionsEnded,
		Now:           a.now,
		Log:           a.log,
	}
	if canMail {
		rules.Mail = accountpages.Mails(a.kit, accountpages.Mailer{Sender: mailer.Sender, From: mailer.From, Colors: mailer.Colors, Metrics: mailer.Metrics, Log: mailer.Log}, offers)
	}
	h := accountpages.New(accountpages.Deps{
		Kit: a.kit, Offers: offers, Rules: rules, Sessions: a.sessions,
		JWT: a.cfg.Session.Strategy == config.StrategyJWT, Metrics: a.metrics, Log: a.log,
	})
	return rules, h
}

// buildPasskeys builds the webauthn providers' relying parties and their
// challenge cookie (app/passkey), which the passkey flow and the passkeys
// page share.
func (a *App) buildPasskeys() (*passkey.Parties, error) {
	sec := ""
	if a.base.Secure {
		sec = "__Secure-"
	}
	w := a.cookies
	w.Path = a.base.Path
	return passkey.NewParties(passkey.PartiesConfig{
		Providers: a.cfg.Providers,
		RPID:      a.cfg.PasskeyRPID,
		Name:      web.HostOf(a.base.Origin),
		Origin:    a.base.Origin,
		Cookie:    sec + a.dialect.cookiePrefix + ".challenge",
		Writer:    w,
		Secrets:   a.cfg.Secrets(),
	})
}
