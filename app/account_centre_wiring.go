package app

import (
	"context"
	"log/slog"

	"github.com/latchkey-auth/latchkey/app/accountcentre"
	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/models/accountstore"
)

// buildAccountCentre builds the account page's handler (app/accountcentre)
// over the account rules, which it gives the page's storage
// (models/accountstore), the re-authentication window and the
// self-deletion switch. linker starts an OAuth sign-in (the OAuth flow),
// which links an identity to a signed-in user; tf is the two-factor rules
// (nil when off).
func (w *wiring) buildAccountCentre(rules *accounts.Service, linker accountcentre.Linker, tf *twofactor.Service, apps accountcentre.Apps) *accountcentre.Handler {
	rules.Centre = accountstore.New(w.store)
	rules.ReauthWindow = passkey.ReauthWindow
	rules.SelfDelete = w.cfg.Account.SelfDelete
	// A JWT ended by id is refused here at once (and on the other
	// instances within the poll), with no second to wait out.
	rules.RevocationsChanged = func(ctx context.Context) {
		if err := w.loadRevocations(ctx, true); err != nil {
			logs.RequestFailed(w.log, slog.LevelWarn, err, "session revocations not reloaded; the poll will", "err", err)
		}
	}
	// The new address shows in GET /session at once, not after the lookup
	// cache's copy of the session ages out.
	if pc, ok := w.sessions.(session.ProfileCache); ok {
		rules.UserChanged = pc.UsersChanged
	}
	offers := accountcentre.Offers{Names: map[string]string{}, Mail: rules.Mail != nil, SelfDelete: w.cfg.Account.SelfDelete}
	for _, p := range w.cfg.Providers {
		offers.Names[p.ID] = catalogue.DisplayName(p)
		if p.Type != config.TypeEmail && p.Type != config.TypeCredentials && p.Type != config.TypeWebAuthn {
			offers.Linkable = append(offers.Linkable, p)
		}
	}
	if rules.Offered.Passwords {
		offers.PasswordPage = w.base.URL("/account/password")
	}
	if rules.Offered.Passkeys {
		offers.PasskeysPage = w.base.URL("/passkeys")
	}
	var state accountcentre.TwoFactorState
	if tf != nil {
		offers.TwoFactorPage = w.base.URL("/account/two-factor")
		state = func(ctx context.Context, userID string) (bool, error) {
			st, err := tf.StatusOf(ctx, userID)
			return st.On, err
		}
	}
	return accountcentre.New(accountcentre.Deps{
		Kit: w.kit, Rules: rules, Sessions: w.sessions, Linker: linker, Offers: offers, TwoFactor: state, Apps: apps, Log: w.log, Now: w.now,
	})
}
