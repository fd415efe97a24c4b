package app

import (
	"github.com/latchkey-auth/latchkey/app/accountpages"
	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// buildAccountPages builds the account rules (app/accounts) over the store
// and the sign-in core, and the account pages' handler
// (app/accountpages) over them. The rules are shared: the passkey
// ceremony asks them who registers, the OAuth flow tells a link through
// the handler's TellMethodAdded.
func (a *App) buildAccountPages() (*accounts.Service, *accountpages.Handler) {
	p, ok := a.cfg.Credentials()
	offers := accountpages.Offers{Passwords: ok, SignUp: ok && p.SignupEnabled()}
	offers.PasskeyProvider, _ = a.passkeysProvider()
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

// passkeysProvider is the first webauthn provider: the passkeys page's.
func (a *App) passkeysProvider() (string, bool) {
	for _, p := range a.cfg.Providers {
		if _, ok := a.passkeys.rps[p.ID]; ok {
			return p.ID, true
		}
	}
	return "", false
}
