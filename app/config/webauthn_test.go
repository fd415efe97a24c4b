package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// A passkey provider's relying party must be SERVICE_URL's host or a parent
// domain of it, its extra origins on it, and its options known words; an IP
// address cannot be an RP id (browsers refuse it), with a hint to localhost.
func TestPasskeyProviderValidation(t *testing.T) {
	check := func(serviceURL string, p config.Provider) error {
		cfg := config.Defaults()
		cfg.ServiceURL, cfg.Secret = serviceURL, "0123456789abcdef0123456789abcdef"
		cfg.Providers = []config.Provider{p}
		_, err := cfg.Validate(catalogue)
		return err
	}
	ok := config.Provider{ID: "passkey", Type: config.TypeWebAuthn}
	require.NoError(t, check("http://localhost:3000/api/auth", ok))
	parent := ok
	parent.RPID, parent.Origins = "example.com", []string{"https://app.example.com"}
	require.NoError(t, check("https://auth.example.com/api/auth", parent))

	requireProblem(t, problems(t, check("http://127.0.0.1:3000/api/auth", ok)), "not the IP address 127.0.0.1", "http://localhost")
	other := ok
	other.RPID = "example.org"
	requireProblem(t, problems(t, check("https://auth.example.com/api/auth", other)), `rp_id "example.org" must be the service URL's host`)
	child := ok
	child.RPID = "x.auth.example.com"
	requireProblem(t, problems(t, check("https://auth.example.com/api/auth", child)), "parent domain")
	bad := parent
	bad.Origins = []string{"https://evil.test", "app.example.com"}
	bad.UserVerification, bad.Attestation, bad.CounterRegression = "always", "full", "ignore"
	bad.SignInUserVerification = "never"
	p := problems(t, check("https://auth.example.com/api/auth", bad))
	requireProblem(t, p, `origin "https://evil.test" is not on rp_id`)
	requireProblem(t, p, `origin "app.example.com" must be scheme://host`)
	requireProblem(t, p, `user_verification "always"`)
	requireProblem(t, p, `sign_in_user_verification "never"`)
	requireProblem(t, p, "attestation")
	requireProblem(t, p, "counter_regression")
}

// The passkey keys are read from YAML (an inline struct of Provider), and
// a misspelt one is still an unknown key.
func TestPasskeyProviderYAML(t *testing.T) {
	cfg, err := config.Load([]byte(`
providers:
  - id: passkey
    type: webauthn
    rp_id: example.com
    origins: [https://app.example.com]
    user_verification: required
    sign_in_user_verification: preferred
    attestation: direct
    counter_regression: warn
`), noEnv)
	require.NoError(t, err)
	p := cfg.Providers[0]
	require.Equal(t, "example.com", p.RPID)
	require.Equal(t, []string{"https://app.example.com"}, p.Origins)
	require.Equal(t, []string{"required", "preferred", "direct", "warn"}, []string{p.UserVerification, p.SignInUserVerification, p.Attestation, p.CounterRegression})

	_, err = config.Load([]byte("providers:\n  - id: passkey\n    type: webauthn\n    rpid: example.com\n"), noEnv)
	requireProblem(t, problems(t, err), `unknown key "rpid" in a provider`)
}
