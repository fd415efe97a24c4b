package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models/throttlestore"
)

// credentialsProvider is what the password rules need of p. It shares the
// instance's hasher (w.hasher: its bound on concurrent hashes must
// cover every check); the throttle's counters are in the database, so the
// rest is made per sign-in.
func (w *wiring) credentialsProvider(p config.Provider) signin.CredentialsProvider {
	return signin.CredentialsProvider{
		ID:        p.ID,
		Hasher:    w.hasher,
		Passwords: w.store,
		Throttle:  signin.NewThrottle(throttlestore.New(w.store)),
	}
}
