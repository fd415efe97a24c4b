package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// Every rate_limit key of an e-mail provider is read from the file.
func TestRateLimitKeys(t *testing.T) {
	yaml := `providers:
  - id: email
    type: email
    rate_limit: {per_address: 3, per_address_ceiling: 30, per_ip: 10, per_network: 40, per_ipv4_network: 60, global: 500, window: 30m, max_keys: 1000}
`
	cfg, err := config.Load([]byte(yaml), noEnv)
	require.NoError(t, err)
	require.Equal(t, config.RateLimit{
		PerAddress: 3, PerAddressCeiling: 30, PerIP: 10, PerNetwork: 40, PerIPv4Network: 60, Global: 500,
		Window: config.Duration(30 * time.Minute), MaxKeys: 1000,
	}, cfg.Providers[0].RateLimit)
	warnings, err := cfg.Validate(catalogue)
	require.NoError(t, err)
	require.Contains(t, strings.Join(warnings, "\n"), "providers[0] (email): rate_limit.max_keys has no effect")
}

// Negative limits are refused (zero means the default), and so is a ceiling
// below the per-(address, client) limit, which would silently replace it.
func TestRateLimitValidation(t *testing.T) {
	cfg := config.Defaults()
	cfg.Providers = []config.Provider{
		{ID: "neg", Type: "email", RateLimit: config.RateLimit{
			PerAddress: -1, PerAddressCeiling: -1, PerIP: -1, PerNetwork: -1, PerIPv4Network: -1, Global: -1,
			Window: config.Duration(-time.Minute), MaxKeys: -1,
		}},
		{ID: "low", Type: "email", RateLimit: config.RateLimit{PerAddress: 5, PerAddressCeiling: 4}},
		{ID: "fine", Type: "email", RateLimit: config.RateLimit{PerAddress: 5, PerAddressCeiling: 5}},
	}
	_, err := cfg.Validate(catalogue)
	p := problems(t, err)
	for _, key := range []string{"per_address", "per_address_ceiling", "per_ip", "per_network", "per_ipv4_network", "global", "max_keys", "window"} {
		requireProblem(t, p, "providers[0] (neg)", "rate_limit."+key+" must not be negative")
	}
	requireProblem(t, p, "providers[1] (low)", "per_address_ceiling (4) is below per_address (5)")
	require.Len(t, p, 9, p.Error())
}
