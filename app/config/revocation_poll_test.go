package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// session.revocation_poll bounds how long a revoked session lives on: too
// short hammers the database, too long breaks the promise; 0 is the default.
func TestRevocationPoll(t *testing.T) {
	checkSessionKey(t, "revocation_poll", map[string]string{
		"1s": "", "250ms": "", "5m": "", "0s": "",
		"50ms": "session.revocation_poll: 50ms must be between 100ms and 5m",
		"1h":   "session.revocation_poll: 1h0m0s must be between 100ms and 5m",
	})
}

// checkSessionKey loads `session: {key: value}` for each value and
// validates it: problem is the error it must give, "" for none.
func checkSessionKey(t *testing.T, key string, problems map[string]string) {
	t.Helper()
	for value, problem := range problems {
		cfg, err := config.Load([]byte("session:\n  "+key+": "+value+"\n"), func(string) (string, bool) { return "", false })
		require.NoError(t, err, value)
		_, err = cfg.Validate(func(string) ([]string, bool) { return nil, true })
		if problem == "" {
			require.NoError(t, err, value)
			continue
		}
		require.ErrorContains(t, err, problem, value)
	}
}
