package app

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
)

// Defaults of the e-mail provider, applied where the config leaves zero.
const (
	defaultEmailMaxAge = 24 * time.Hour // next-auth's maxAge
)

// emailProvider is one e-mail provider ready for requests.
type emailProvider struct {
	id     string
	sender email.Sender // nil: no server configured, links go to the log
	from   string
	maxAge time.Duration
	// limits are the rate limits (all off with rate_limit.disabled).
	limits  *email.Limits
	confirm bool
}

// buildEmailProviders prepares every e-mail provider once: its SMTP
// sender, link lifetime and rate limiters (which must outlive requests).
func (a *App) buildEmailProviders() (map[string]*emailProvider, error) {
	out := map[string]*emailProvider{}
	for _, p := range a.cfg.Providers {
		if typeOf(p) != config.TypeEmail {
			continue
		}
		ep := &emailProvider{id: p.ID, from: p.From, maxAge: p.MaxAge.D(), confirm: p.Confirm}
		if ep.maxAge <= 0 {
			ep.maxAge = defaultEmailMaxAge
		}
		if ep.from == "" {
			ep.from = "no-reply@" + mailDomainOf(a.base.Origin)
		}
		if p.Server != "" {
			s, err := email.NewSMTP(p.Server, email.SMTPOptions{Logger: a.log.With("provider", p.ID)})
			if err != nil {
				return nil, fmt.Errorf("provider %s: %w", p.ID, err)
			}
			ep.sender = s
		}
		rl := p.RateLimit
		limits, err := email.NewLimits(email.LimitConfig{
			Disabled: rl.Disabled, PerAddress: rl.PerAddress, PerAddressCeiling: rl.PerAddressCeiling,
			PerIP: rl.PerIP, PerNetwork: rl.PerNetwork, Global: rl.Global, Window: rl.Window.D(), MaxKeys: rl.MaxKeys,
		}, a.log.With("provider", p.ID))
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", p.ID, err)
		}
		ep.limits = limits
		out[p.ID] = ep
	}
	return out, nil
}

// allow counts one sign-in request against the provider's rate limits; the
// reason names the limit that refused it (never the address).
func (ep *emailProvider) allow(addr, remoteAddr string, now time.Time) (ok bool, reason string) {
	return ep.limits.Allow(addr, remoteAddr, now)
}

// deliver sends msg, or without a server writes the link to the log: the
// one place a link is ever logged, and only in development.
func (a *App) deliver(ctx context.Context, ep *emailProvider, msg email.Message, link string) error {
	if ep.sender == nil {
		a.log.Warn("no SMTP server configured: sign-in link written to the log (development only)",
			"provider", ep.id, "to", msg.To, "url", link)
		return nil
	}
	return ep.sender.Send(ctx, msg)
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
