package app

import (
	"context"
	"fmt"

	"github.com/latchkey-auth/latchkey/app/accountcentre"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/app/openidprovider"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// buildOpenID builds the OpenID Provider when oidc.enabled: its rules
// (app/openid, on models/openidstore) and its handler
// (app/openidprovider); groups fill the groups claim. nil, nil when off:
// no route, no key is made. The purge of its expired rows joins the
// background purge (purger).
func (w *wiring) buildOpenID(groups openid.Groups) (*openidprovider.Handler, *openid.Service, error) {
	o := w.cfg.OpenID
	if !o.Enabled {
		return nil, nil, nil
	}
	// Anyone can have an authorization request stored: each client's are
	// counted in the database (rate_limits), as the e-mail limits are.
	al := o.AuthorizeLimit
	limits, err := email.NewClientLimits(email.ClientLimitConfig{
		Disabled: al.Disabled, Name: "oidc:authorize", PerClient: al.PerIP, PerNetwork: al.PerNetwork, Window: al.Window.D(),
	}, w.store)
	if err != nil {
		return nil, nil, fmt.Errorf("oidc.authorize_limit: %w", err)
	}
	rules, err := openid.New(openidstore.New(w.store), groups, openid.Settings{
		Algorithm: o.SigningAlgorithm, AccessTTL: o.AccessTokenLifetime.D(), IDTTL: o.IDTokenLifetime.D(),
		RefreshTTL: o.RefreshTokenLifetime.D(), KeyLead: o.KeyPublishLead.D(),
		LoginURL: openidprovider.LoginURL(w.base), LogoutURL: openidprovider.LogoutURL(w.base), Clients: o.Clients,
		Limits: limits, Origin: w.base.Origin,
	}, w.cfg.Secrets(), w.now, w.log)
	if err != nil {
		return nil, nil, err
	}
	h, err := openidprovider.New(openidprovider.Deps{
		Kit: w.kit, Base: w.base, Rules: rules, Sessions: w.sessions, Secrets: w.cfg.Secrets(),
		Languages: w.langs.Languages(), ClientIP: clientIP(w.cfg.TrustedProxies), Log: w.log,
	})
	if err != nil {
		return nil, nil, err
	}
	w.purge.tasks = append(w.purge.tasks, rules.Purge)
	w.front.clientURIs = func() []string { return rules.ClientURIs(context.Background()) }
	return h, rules, nil
}

// appsOf is the account page's apps part: the provider's rules, or nil
// (not a nil *openid.Service in an interface) when it is off.
func appsOf(rules *openid.Service) accountcentre.Apps {
	if rules == nil {
		return nil
	}
	return rules
}
