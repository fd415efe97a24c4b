package app

import (
	"net/url"
	"time"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/app/twofactorpages"
	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// buildTwoFactor builds the second factor when two_factor.mode is not off:
// its rules (app/twofactor, on its storage: models/twofactorstore), given
// to the sign-in core (the gate before every session) and to the account
// rules (which forget remembered browsers), and its handler
// (app/twofactorpages), whose Flow answers the `two-factor` provider's
// callback. nil when off: no route, no gate.
func (w *wiring) buildTwoFactor(rules *accounts.Service) (*twofactorpages.Handler, *twofactor.Service, error) {
	tf := w.cfg.TwoFactor
	if !tf.On() {
		return nil, nil, nil
	}
	issuer := tf.Issuer
	if issuer == "" {
		// The host name without its port: authenticator apps split the
		// otpauth label issuer:account at its first colon.
		u, _ := url.Parse(w.base.Origin)
		issuer = u.Hostname()
	}
	policy := twofactor.Policy{Mode: twofactor.Mode(tf.Mode), RequiredFor: tf.RequiredList(), RememberFor: time.Duration(tf.RememberDevice)}
	secrets := w.cfg.Secrets()
	svc, err := twofactor.New(twofactorstore.New(w.store), policy, issuer, secrets, func(v string) []string { return email.HashTokens(v, secrets) }, w.now, w.log)
	if err != nil {
		return nil, nil, err
	}
	w.core.SecondFactor, w.core.DeviceCookie = svc, w.names.Device
	rules.Devices, rules.SecondFactor = svc, svc
	return twofactorpages.New(twofactorpages.Deps{
		Kit: w.kit, Core: w.core, Rules: svc, Accounts: rules, Sessions: w.sessions,
		Remember: policy.RememberFor, Reauth: passkey.ReauthWindow, Metrics: w.metrics, Log: w.log, Now: w.now,
	}), svc, nil
}

// twoFactorProvider is the provider GET /providers lists for the second
// step when two-factor is on (reported as credentials: the next-auth
// client posts its code as it posts a password).
var twoFactorProvider = config.Provider{ID: config.TwoFactorProviderID, Type: config.TypeTwoFactor, Name: "Two-factor code"}
