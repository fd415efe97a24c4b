package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// hsts: is read from the file, HSTS_MAX_AGE overrides its max_age, and a
// max-age that is negative or not whole seconds is refused. The header
// value is sent under https only.
func TestHSTSConfig(t *testing.T) {
	require.Equal(t, 365*24*time.Hour, config.Defaults().HSTS.MaxAge.D())
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"HSTS_MAX_AGE": "730d", "SERVICE_URL": "https://auth.example.com"}[k]
		return v, ok
	}
	cfg, err := config.Load([]byte("hsts:\n  max_age: 1h\n  include_subdomains: true\n"), env)
	require.NoError(t, err)
	require.Equal(t, "max-age=63072000; includeSubDomains", cfg.HSTSValue())
	cfg.ServiceURL = "http://localhost:3000"
	require.Empty(t, cfg.HSTSValue(), "never over http")

	_, err = config.Load(nil, func(k string) (string, bool) { return "1 year", k == "HSTS_MAX_AGE" })
	requireProblem(t, problems(t, err), "HSTS_MAX_AGE")
	for _, bad := range []string{"-1s", "1500ms"} {
		cfg := config.Defaults()
		d, err := config.ParseDuration(bad)
		require.NoError(t, err)
		cfg.HSTS.MaxAge = config.Duration(d)
		_, err = cfg.Validate(catalogue)
		requireProblem(t, problems(t, err), "hsts.max_age")
	}
}
