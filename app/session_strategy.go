package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
)

// buildSessions picks the configured strategy; JWT keys are derived here, once.
func (w *wiring) buildSessions() (session.Strategy, error) {
	life := session.Lifetime{
		MaxAge:         w.cfg.Session.MaxAge.D(),
		UpdateAge:      w.cfg.Session.UpdateAge.D(),
		AbsoluteMaxAge: w.cfg.Session.AbsoluteMaxAge.D(),
		Now:            w.now,
	}
	// Only the session cookie is shared with sibling hosts (cookies.domain).
	cw := w.cookies
	cw.Domain = w.cfg.Cookies.CookieDomain()
	if w.cfg.Session.Strategy == config.StrategyJWT {
		j, err := session.NewJWT(w.cfg.Secrets(), w.style.jwt, w.names.SessionToken, cw, life)
		if err != nil {
			return nil, err
		}
		j.WithRevocations(w.revocations)
		if !w.claimHooks {
			j.WithFixedClaims()
		}
		return j, nil
	}
	return session.NewDatabase(w.store, w.names.SessionToken, cw, life).WithRevocations(w.revocations).WithLookupCache(w.cfg.Session.CacheTTL.D())
}
