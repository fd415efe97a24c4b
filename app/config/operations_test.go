package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// Metrics are off and logs are text with access lines unless configured;
// the file sets them and METRICS_ADDR / LOG_FORMAT win over it.
func TestOperationsSettings(t *testing.T) {
	cfg, err := config.Load(nil, noEnv)
	require.NoError(t, err)
	require.Equal(t, config.Metrics{}, cfg.Metrics)
	require.Equal(t, config.Log{Format: "text", Access: true}, cfg.Log)

	file := []byte("metrics:\n  listen: 127.0.0.1:9464\nlog:\n  format: json\n  access: false\n")
	cfg, err = config.Load(file, noEnv)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9464", cfg.Metrics.Listen)
	require.Equal(t, config.Log{Format: "json", Access: false}, cfg.Log)

	cfg, err = config.Load(file, env("METRICS_ADDR", "10.0.0.5:9100", "LOG_FORMAT", "text"))
	require.NoError(t, err)
	require.Equal(t, "10.0.0.5:9100", cfg.Metrics.Listen)
	require.Equal(t, "text", cfg.Log.Format)
	warnings, err := cfg.Validate(catalogue)
	require.NoError(t, err)
	require.Empty(t, warnings)
}

func TestOperationsValidation(t *testing.T) {
	validate := func(metricsAddr, format string) ([]string, error) {
		cfg := config.Defaults()
		cfg.Metrics.Listen, cfg.Log.Format = metricsAddr, format
		return cfg.Validate(catalogue)
	}
	_, err := validate("", "xml")
	requireProblem(t, problems(t, err), `log.format (LOG_FORMAT): "xml" must be "text" or "json"`)
	for _, bad := range []string{"9464", "localhost", "127.0.0.1:http", "127.0.0.1:70000"} {
		_, err = validate(bad, "text")
		requireProblem(t, problems(t, err), "metrics.listen (METRICS_ADDR): "+`"`+bad+`" is not an address`)
	}
	_, err = validate("127.0.0.1:3000", "text")
	requireProblem(t, problems(t, err), "port 3000 is the service's own port")
	for _, everywhere := range []string{":9464", "0.0.0.0:9464", "[::]:9464"} {
		warnings, err := validate(everywhere, "json")
		require.NoError(t, err)
		require.Len(t, warnings, 1, everywhere)
		require.Contains(t, warnings[0], "listens on every interface")
	}
}
