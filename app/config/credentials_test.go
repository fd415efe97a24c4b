package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

func TestCredentialsProvider(t *testing.T) {
	cfg, err := config.Load([]byte("providers:\n  - type: credentials\n"), env())
	require.NoError(t, err)
	_, err = cfg.Validate(catalogue)
	require.NoError(t, err)
	p, ok := cfg.Credentials()
	require.True(t, ok)
	require.Equal(t, "credentials", p.ID, "next-auth's default id")
	require.True(t, p.SignupEnabled(), "sign-up is on unless turned off")

	cfg, err = config.Load([]byte("providers:\n  - {type: credentials, id: password, name: Password, signup: false}\n"), env())
	require.NoError(t, err)
	p, _ = cfg.Credentials()
	require.Equal(t, "password", p.ID)
	require.False(t, p.SignupEnabled())

	cfg, err = config.Load([]byte("providers:\n  - {type: credentials, client_id: x, issuer: 'https://x'}\n  - {type: credentials, id: two}\n"), env())
	require.NoError(t, err)
	_, err = cfg.Validate(catalogue)
	requireProblem(t, problems(t, err), "client_id is not a setting of a credentials provider")
	requireProblem(t, problems(t, err), "issuer is not a setting")
	requireProblem(t, problems(t, err), "2 providers have type credentials")

	cfg = config.Defaults()
	cfg.Providers = []config.Provider{{ID: "x", Type: "password"}}
	_, err = cfg.Validate(catalogue)
	requireProblem(t, problems(t, err), "must be oauth, oidc, email, credentials or webauthn")
}
