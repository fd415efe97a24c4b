package app

import (
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// defaultEmailMaxAge is next-auth's link lifetime, used where the config
// leaves zero (the rate limits' defaults live in app/email).
const defaultEmailMaxAge = 24 * time.Hour

// buildEmailProviders prepares every e-mail provider once: its SMTP
// sender, link lifetime and rate limiters (which must outlive requests).
func (a *App) buildEmailProviders() (map[string]signin.EmailProvider, error) {
	out := map[string]signin.EmailProvider{}
	for _, p := range a.cfg.Providers {
		if p.Type != config.TypeEmail {
			continue
		}
		m := linkMailer{provider: p.ID, from: p.From, host: web.HostOf(a.base.Origin), log: a.log, metrics: a.metrics,
			colors: views.EmailColors{BrandColor: a.theme.brandColor, ButtonText: a.theme.buttonText}, lang: a.langs.Default()}
		if m.from == "" {
			m.from = "no-reply@" + mailDomainOf(a.base.Origin)
		}
		if p.Server != "" {
			s, err := email.NewSMTP(p.Server, email.SMTPOptions{Logger: a.log.With("provider", p.ID)})
			if err != nil {
				return nil, fmt.Errorf("provider %s: %w", p.ID, err)
			}
			m.sender = s
		}
		ep := signin.EmailProvider{
			ID:       p.ID,
			MaxAge:   p.MaxAge.D(),
			Endpoint: a.base.URL("/callback/" + p.ID),
			Mailer:   m,
		}
		if ep.MaxAge <= 0 {
			ep.MaxAge = defaultEmailMaxAge
		}
		rl := p.RateLimit
		// The counters live in the database, for SQLite as for PostgreSQL:
		// instances sharing it share the limits, restarts keep them, and
		// the one code path is the one the tests run. rl.MaxKeys bounded
		// the former in-memory tables and is ignored (Validate warns).
		// Refusals are counted by tier (latchkey_ratelimit_refusals_total);
		// limits that cannot be checked refuse too, but as a database
		// failure, counted there.
		limits, err := email.NewLimits(email.LimitConfig{
			Disabled: rl.Disabled, Provider: p.ID, PerAddress: rl.PerAddress, PerAddressCeiling: rl.PerAddressCeiling,
			PerIP: rl.PerIP, PerNetwork: rl.PerNetwork, PerIPv4Network: rl.PerIPv4Network, Global: rl.Global,
			Window: rl.Window.D(), Refused: a.metrics.RateLimitRefusal,
		}, a.store, a.log.With("provider", p.ID))
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", p.ID, err)
		}
		ep.Limits = limits
		out[p.ID] = ep
	}
	return out, nil
}

// mailDomainOf is the domain of the default From address: the service's
// host name, or localhost when the service is reached by IP address.
func mailDomainOf(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || u.Hostname() == "" || net.ParseIP(u.Hostname()) != nil {
		return "localhost"
	}
	return u.Hostname()
}
