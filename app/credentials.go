package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// credentialsProvider is what the password rules need of p. It shares the
// instance's hasher (a.hasher: its bound on concurrent hashes must
// cover every check); the throttle's counters are in the database, so the
// rest is made per sign-in.
func (a *App) credentialsProvider(p config.Provider) signin.CredentialsProvider {
	return signin.CredentialsProvider{
		ID:        p.ID,
		Hasher:    a.hasher,
		Passwords: a.store,
		Throttle:  signin.NewThrottle(a.store),
	}
}
