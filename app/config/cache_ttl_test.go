package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// session.cache_ttl is how long a session ended elsewhere may still be
// answered here: 1s unless set, 0 turns the cache off, more than a minute
// (or less than nothing) is refused.
func TestCacheTTL(t *testing.T) {
	cfg, err := config.Load([]byte("session:\n  strategy: database\n"), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.Equal(t, time.Second, cfg.Session.CacheTTL.D(), "the default")
	checkSessionKey(t, "cache_ttl", map[string]string{
		"0s": "", "0": "", "250ms": "", "1m": "",
		"61s": "session.cache_ttl: 1m1s must be between 0 (no cache) and 1m",
		"-1s": "session.cache_ttl: -1s must be between 0 (no cache) and 1m",
	})
}
