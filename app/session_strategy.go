package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models/accountstore"
	"github.com/latchkey-auth/latchkey/models/groupstore"
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
	// Every session is recorded with where it started, so the account page
	// can list and end them one by one (models/accountstore); the client's
	// address is the one the listener's trusted proxies tell.
	records, ip := accountstore.New(w.store), session.ClientIP(clientIP(w.cfg.TrustedProxies))
	if w.cfg.Session.Strategy == config.StrategyJWT {
		j, err := session.NewJWT(w.cfg.Secrets(), w.style.jwt, w.names.SessionToken, cw, life)
		if err != nil {
			return nil, err
		}
		j.WithRevocations(w.revocations).WithRecords(records, ip)
		if !w.claimHooks {
			j.WithFixedClaims()
		}
		return j, nil
	}
	// Forward-auth reads the user's stored groups with the session
	// (session.Database.ReadWithGroups).
	return session.NewDatabase(w.store, w.names.SessionToken, cw, life).WithRevocations(w.revocations).
		WithRecords(records, ip).WithGroups(groupstore.New(w.store)).WithLookupCache(w.cfg.Session.CacheTTL.D(), w.cfg.Session.OutageGrace.D())
}
