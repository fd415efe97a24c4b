package app

import (
	"github.com/latchkey-auth/latchkey/app/accountpages"
	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// buildAccountPages builds the account rules (app/accounts) over the store
// and the sign-in core, and the account pages' handler
// (app/accountpages) over them. The rules are shared: the passkey flow
// asks them who registers, the OAuth flow tells a link through the
// handler's TellMethodAdded.
func (a *App) buildAccountPages() (*accounts.Service, *accountpages.Handler) {
	p, ok := a.cfg.Credentials()
	offers := accountpages.Offers{Passwords: ok, SignUp: ok && p.SignupEnabled()}
	offers.PasskeyProvider = a.passkeys.First()
	mailer, limits, canMail := a.accountMailer()
	offers.Mail = canMail
	rules := &accounts.Service{
		Store:    a.store,
		Core:     a.core,
		Hooks:    a.hooks,
		Provider: p.ID,
		Offered:  accounts.Offered{Passwords: ok, Email: len(a.emails) > 0, Passkeys: offers.PasskeyProvider != ""},
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
		rules.Mail = accountpages.Mails(a.kit, mailer, offers)
	}
	h := accountpages.New(accountpages.Deps{
		Kit: a.kit, Offers: offers, Rules: rules, Sessions: a.sessions,
		JWT: a.cfg.Session.Strategy == config.StrategyJWT, Metrics: a.metrics, Log: a.log,
	})
	return rules, h
}

// accountMailer is the account pages' mailer: the first e-mail provider's
// server, sender and rate limits; ok is false when there is none, and then
// no page that needs an e-mail is offered.
func (a *App) accountMailer() (m accountpages.Mailer, limits signin.Limiter, ok bool) {
	for _, p := range a.cfg.Providers {
		ep, found := a.emails[p.ID]
		if !found {
			continue
		}
		link, isLink := ep.Mailer.(linkMailer)
		if !isLink {
			continue
		}
		return accountpages.Mailer{Sender: link.sender, From: link.from, Colors: link.colors, Metrics: link.metrics, Log: link.log}, ep.Limits, true
	}
	return accountpages.Mailer{}, nil, false
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
