package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
)

// buildSessions picks the configured strategy; JWT keys are derived here, once.
func (a *App) buildSessions() (session.Strategy, error) {
	life := session.Lifetime{
		MaxAge:         a.cfg.Session.MaxAge.D(),
		UpdateAge:      a.cfg.Session.UpdateAge.D(),
		AbsoluteMaxAge: a.cfg.Session.AbsoluteMaxAge.D(),
		Now:            a.now,
	}
	// Only the session cookie is shared with sibling hosts (cookies.domain).
	w := a.cookies
	w.Domain = a.cfg.Cookies.CookieDomain()
	if a.cfg.Session.Strategy == config.StrategyJWT {
		j, err := session.NewJWT(a.cfg.Secrets(), a.dialect.jwt, a.names.SessionToken, w, life)
		if err != nil {
			return nil, err
		}
		j.WithRevocations(a.revocations)
		if !a.claimHooks {
			j.WithFixedClaims()
		}
		return j, nil
	}
	return session.NewDatabase(a.store, a.names.SessionToken, w, life).WithRevocations(a.revocations).WithLookupCache(a.cfg.Session.CacheTTL.D())
}
