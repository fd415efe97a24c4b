package app

import (
	"github.com/latchkey-auth/latchkey/app/accountpages"
	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/emailflow"
	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models/passwordstore"
	"github.com/latchkey-auth/latchkey/models/throttlestore"
)

// buildAccountPages builds the account rules (app/accounts) over the store
// and the sign-in core, and the account pages' handler
// (app/accountpages) over them. The rules are shared: the passkey flow
// asks them who registers, the OAuth flow tells a link through the
// handler's TellMethodAdded. The first e-mail provider's server, sender
// and rate limits send their e-mails (mail.AccountMailer); without one no
// page that needs an e-mail is offered.
func (w *wiring) buildAccountPages(mail *emailflow.Handler) (*accounts.Service, *accountpages.Handler) {
	p, ok := w.cfg.Credentials()
	// Wrong passwords typed on the account pages count in the password
	// sign-in's buckets (guessing there is guessing at sign-in), and the
	// browser's device cookie counts as it does there.
	throttle := signin.NewThrottle(throttlestore.New(w.store))
	throttle.Devices = w.devices
	offers := accountpages.Offers{Passwords: ok, SignUp: ok && p.SignupEnabled()}
	offers.PasskeyProvider = w.passkeys.First()
	mailer, limits, canMail := mail.AccountMailer()
	offers.Mail = canMail
	rules := &accounts.Service{
		Store:         w.store,
		Flows:         passwordstore.New(w.store),
		Passkeys:      w.passkeyStore,
		Core:          w.core,
		Hooks:         w.hooks,
		Provider:      p.ID,
		Offered:       accounts.Offered{Passwords: ok, Email: mail.Offered(), Passkeys: offers.PasskeyProvider != ""},
		Hasher:        w.hasher,
		Policy:        password.NewPolicy(),
		Throttle:      throttle,
		Limits:        limits,
		Hashes:        func(v string) []string { return email.HashTokens(v, w.cfg.Secrets()) },
		SessionsEnded: w.sessionsEnded,
		Now:           w.now,
		Log:           w.log,
	}
	if canMail {
		rules.Mail = accountpages.Mails(w.kit, accountpages.Mailer{Sender: mailer.Sender, From: mailer.From, Colors: mailer.Colors, Metrics: mailer.Metrics, Log: mailer.Log}, offers)
	}
	h := accountpages.New(accountpages.Deps{
		Kit: w.kit, Offers: offers, Rules: rules, Sessions: w.sessions,
		Metrics: w.metrics, Log: w.log,
	})
	return rules, h
}

// buildPasskeys builds the webauthn providers' relying parties and their
// challenge cookie (app/passkey), which the passkey flow and the passkeys
// page share.
func (w *wiring) buildPasskeys() (*passkey.Parties, error) {
	sec := ""
	if w.base.Secure {
		sec = "__Secure-"
	}
	cw := w.cookies
	cw.Path = w.base.Path
	return passkey.NewParties(passkey.PartiesConfig{
		Providers: w.cfg.Providers,
		RPID:      w.cfg.PasskeyRPID,
		Name:      web.HostOf(w.base.Origin),
		Origin:    w.base.Origin,
		Cookie:    sec + w.style.cookiePrefix + ".challenge",
		Writer:    cw,
		Secrets:   w.cfg.Secrets(),
	})
}
