package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// two_factor loads from the file with its defaults (off, 30 days of
// remembering), and every mistake is reported at once.
func TestTwoFactorConfig(t *testing.T) {
	cfg := config.Defaults()
	require.Equal(t, config.TwoFactorOff, cfg.TwoFactor.Mode)
	require.False(t, cfg.TwoFactor.On())
	require.Equal(t, 30*24*time.Hour, time.Duration(cfg.TwoFactor.RememberDevice))

	cfg, err := config.Load([]byte(`
service_url: http://auth.example.com/api/auth
two_factor:
  mode: required
  required_for: [Boss@Example.com, "@corp.example"]
  remember_device: 0s
  issuer: Example Inc.
access:
  - hosts: [admin.example.com]
    anyone: true
    two_factor: true
`), env())
	require.NoError(t, err)
	require.True(t, cfg.TwoFactor.On())
	require.Equal(t, []string{"boss@example.com", "corp.example"}, cfg.TwoFactor.RequiredList())
	require.Zero(t, cfg.TwoFactor.RememberDevice)
	require.True(t, cfg.Access[0].TwoFactor)

	bad := config.Defaults()
	bad.ServiceURL, bad.Secret = "http://auth.example.com/api/auth", "0123456789abcdef0123456789abcdef"
	bad.TwoFactor = config.TwoFactor{Mode: "sometimes", RequiredFor: []string{"not an address"}, RememberDevice: -1, Issuer: "Example: Inc"}
	bad.Access = []config.AccessRule{{Hosts: []string{"a.example.com"}, Anyone: true, TwoFactor: true}}
	_, err = bad.Validate(catalogue)
	p := problems(t, err)
	requireProblem(t, p, "two_factor.mode", "off, optional or required")
	requireProblem(t, p, "two_factor.required_for", "only means something with mode: required")
	requireProblem(t, p, "two_factor.required_for", "neither an address")
	requireProblem(t, p, "two_factor.remember_device")
	requireProblem(t, p, "two_factor.issuer", "colon")
	requireProblem(t, p, "access[0]", "two_factor")

	clash := config.Defaults()
	clash.ServiceURL, clash.Secret = "http://auth.example.com/api/auth", "0123456789abcdef0123456789abcdef"
	clash.TwoFactor.Mode = config.TwoFactorOptional
	clash.Providers = append(clash.Providers, config.Provider{ID: "two-factor", Type: config.TypeCredentials})
	_, err = clash.Validate(catalogue)
	requireProblem(t, problems(t, err), "two-factor")
}
