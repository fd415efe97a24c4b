package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// The service listens on every interface unless listen names an address;
// the port is always port's (PORT), and LISTEN wins over the file.
func TestListenAddress(t *testing.T) {
	cfg, err := config.Load(nil, noEnv)
	require.NoError(t, err)
	require.Equal(t, ":3000", cfg.ListenAddr())

	file := []byte("listen: 127.0.0.1\nport: 8080\n")
	cfg, err = config.Load(file, noEnv)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", cfg.ListenAddr())

	for _, tc := range []struct{ listen, want string }{
		{"::1", "[::1]:4000"},
		{"[::1]", "[::1]:4000"},
		{"localhost", "localhost:4000"},
		{"0.0.0.0", "0.0.0.0:4000"},
		{"fe80::1%eth0", "[fe80::1%eth0]:4000"},
	} {
		cfg, err = config.Load(file, env("LISTEN", tc.listen, "PORT", "4000"))
		require.NoError(t, err, tc.listen)
		require.Equal(t, tc.want, cfg.ListenAddr())
		_, err = cfg.Validate(catalogue)
		require.NoError(t, err, tc.listen)
	}
}

// A port in listen is refused, naming the fix, rather than competing with
// port; so is anything that is not an address or a host name.
func TestListenValidation(t *testing.T) {
	validate := func(listen string) error {
		cfg := config.Defaults()
		cfg.Listen = listen
		_, err := cfg.Validate(catalogue)
		return err
	}
	for bad, host := range map[string]string{"127.0.0.1:3000": "127.0.0.1", "[::1]:3000": "::1", "localhost:80": "localhost"} {
		requireProblem(t, problems(t, validate(bad)), `listen (LISTEN): "`+bad+`" names a port; listen takes the address alone (e.g. `+host+`) and port (PORT) the port`)
	}
	for _, bad := range []string{"http://127.0.0.1", "127.0.0.1:70000", "a b", "[127.0.0.1", "-x.example.com"} {
		requireProblem(t, problems(t, validate(bad)), `listen (LISTEN): "`+bad+`" is not an IP address or host name`)
	}
}
