package app

import (
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// Defaults of the e-mail provider, applied where the config leaves zero.
const (
	defaultEmailMaxAge     = 24 * time.Hour // next-auth's maxAge
	defaultEmailPerAddress = 5
	defaultEmailPerIP      = 20
	defaultEmailRateWindow = time.Hour
)

// buildEmailProviders prepares every e-mail provider once: its SMTP
// sender, link lifetime and rate limiters (which must outlive requests).
func (a *App) buildEmailProviders() (map[string]signin.EmailProvider, error) {
	out := map[string]signin.EmailProvider{}
	for _, p := range a.cfg.Providers {
		if p.Type != config.TypeEmail {
			continue
		}
		m := linkMailer{provider: p.ID, from: p.From, host: hostOf(a.base.Origin), log: a.log}
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
		if rl := p.RateLimit; !rl.Disabled {
			window := rl.Window.D()
			if window <= 0 {
				window = defaultEmailRateWindow
			}
			ep.Limits = emailLimits{
				perAddress: email.NewLimiter(positiveOr(rl.PerAddress, defaultEmailPerAddress), window),
				perIP:      email.NewLimiter(positiveOr(rl.PerIP, defaultEmailPerIP), window),
			}
		}
		out[p.ID] = ep
	}
	return out, nil
}

// emailLimits counts sign-in requests per client IP and per address.
type emailLimits struct {
	perAddress, perIP *email.Limiter
}

// Allow counts one request against both limits; the reason names the
// limit that refused it. The IP is checked first so that a refused IP does
// not also spend the address's allowance.
func (l emailLimits) Allow(addr, remoteAddr string, now time.Time) (ok bool, reason string) {
	ip := email.ClientKey(remoteAddr)
	if !l.perIP.Allow(ip, now) {
		return false, "per-IP limit reached for " + ip
	}
	if !l.perAddress.Allow(addr, now) {
		return false, "per-address limit reached for " + addr
	}
	return true, ""
}

func positiveOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
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
