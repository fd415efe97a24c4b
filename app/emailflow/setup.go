package emailflow

import (
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// defaultEmailMaxAge is next-auth's link lifetime, used where the config
// leaves zero (the rate limits' defaults live in app/email).
const defaultEmailMaxAge = 24 * time.Hour

// buildProviders prepares every e-mail provider once: its SMTP sender,
// link lifetime and rate limiters (which must outlive requests); it lists
// their ids in the config's order.
func buildProviders(d Deps) (map[string]signin.EmailProvider, []string, error) {
	out := map[string]signin.EmailProvider{}
	var order []string
	for _, p := range d.Providers {
		if p.Type != config.TypeEmail {
			continue
		}
		m := Mailer{provider: p.ID, From: p.From, host: web.HostOf(d.Base.Origin), Log: d.Log, Metrics: d.Metrics,
			Colors: d.Colors, lang: d.Lang}
		if m.From == "" {
			m.From = "no-reply@" + mailDomainOf(d.Base.Origin)
		}
		if p.Server != "" {
			s, err := email.NewSMTP(p.Server, email.SMTPOptions{Logger: d.Log.With("provider", p.ID), Hello: helloOf(d.Base.Origin)})
			if err != nil {
				return nil, nil, fmt.Errorf("provider %s: %w", p.ID, err)
			}
			m.Sender = s
		}
		ep := signin.EmailProvider{
			ID:       p.ID,
			MaxAge:   p.MaxAge.D(),
			Endpoint: d.Base.URL("/callback/" + p.ID),
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
			Window: rl.Window.D(), Refused: d.Metrics.RateLimitRefusal,
		}, d.Counter, d.Log.With("provider", p.ID))
		if err != nil {
			return nil, nil, fmt.Errorf("provider %s: %w", p.ID, err)
		}
		ep.Limits = limits
		out[p.ID] = ep
		order = append(order, p.ID)
	}
	return out, order, nil
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

// helloOf is the EHLO name for the service's origin (email.HelloName).
func helloOf(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return email.HelloName("")
	}
	return email.HelloName(u.Hostname())
}
