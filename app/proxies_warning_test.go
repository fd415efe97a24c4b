package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// Behind a reverse proxy left out of trusted_proxies every client shares
// the proxy's address (one owner's sign-in exempts them all from the
// account's password block; the per-client throttles lump them together).
// The first request that carries a forwarding header from an untrusted
// peer logs one warning naming the setting, never the header's value; the
// next ones log nothing more, and a trusted proxy's headers none at all.
func TestForwardingHeadersFromAnUntrustedPeerWarnOnce(t *testing.T) {
	const warning = "forwarding header from a peer outside trusted_proxies ignored"
	e := startEnv(t, envOpts{logs: true})
	require.Equal(t, http.StatusOK, e.rawDo(http.MethodGet, "/csrf", "", nil).StatusCode)
	require.NotContains(t, e.logs.String(), warning, "no forwarding header, no warning")
	for _, h := range [][]string{
		{"X-Forwarded-For", "198.51.100.7"},
		{"Forwarded", "for=198.51.100.8"},
		{"X-Real-IP", "198.51.100.9"},
	} {
		require.Equal(t, http.StatusOK, e.rawDo(http.MethodGet, "/csrf", "", nil, h...).StatusCode)
	}
	logs := e.logs.String()
	require.Equal(t, 1, strings.Count(logs, warning), logs)
	require.Contains(t, logs, "docs/operations.md")
	require.Contains(t, logs, "level=WARN")
	require.NotContains(t, logs, "198.51.100.")

	trusted := startEnv(t, envOpts{logs: true, config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32", "::1/128"} }})
	require.Equal(t, http.StatusOK, trusted.rawDo(http.MethodGet, "/csrf", "", nil, "X-Forwarded-For", "198.51.100.7").StatusCode)
	require.NotContains(t, trusted.logs.String(), warning)
}
