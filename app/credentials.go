package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models/throttlestore"
)

// credentialsProvider is what the password rules need of p. It shares the
// instance's hasher (w.hasher: its bound on concurrent hashes must
// cover every check) and the device cookies' keys (w.devices, derived
// once); the throttle's counters are in the database, so the rest is made
// per sign-in.
func (w *wiring) credentialsProvider(p config.Provider) signin.CredentialsProvider {
	t := signin.NewThrottle(throttlestore.New(w.store))
	t.Devices = w.devices
	return signin.CredentialsProvider{
		ID:        p.ID,
		Hasher:    w.hasher,
		Passwords: w.store,
		Throttle:  t,
	}
}
