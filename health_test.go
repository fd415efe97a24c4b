package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// `latchkey health` asks the started service (found from the same
// configuration: PORT here) and says it is ready; the metrics listener
// names the build in latchkey_build_info.
func TestHealthAgainstTheService(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	t.Setenv("METRICS_ADDR", metricsAddr)
	serveDuring(t, syscall.SIGTERM, func(port int) {
		code, stdout, stderr := runCmd("health")
		require.Equal(t, 0, code, stderr)
		require.Empty(t, stdout)
		require.Equal(t, fmt.Sprintf("latchkey health: http://127.0.0.1:%d/health/ready: ready\n", port), stderr)

		// --url: an origin gets the ready route; a full URL is asked as is.
		code, _, stderr = runCmd("health", "--url", fmt.Sprintf("http://127.0.0.1:%d", port))
		require.Equal(t, 0, code, stderr)
		code, _, stderr = runCmd("health", "--url", fmt.Sprintf("http://127.0.0.1:%d/health/nosuch", port))
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "not ready (404 Not Found)")

		res, err := http.Get("http://" + metricsAddr + "/metrics")
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		b := currentBuild()
		require.Contains(t, string(body), fmt.Sprintf(`latchkey_build_info{commit=%q,goversion=%q,version=%q} 1`, b.Commit, b.GoVersion, b.Version))
	})
}

// Anything but a 200 within the timeout is unhealthy: exit 1, one line.
func TestHealthFailures(t *testing.T) {
	clearEnv(t)
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/health/ready", r.URL.Path)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer unavailable.Close()
	release := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer stuck.Close()
	defer close(release)

	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"503":          {[]string{"health", "--url", unavailable.URL + "/"}, "/health/ready: not ready (503 Service Unavailable)"},
		"nobody there": {[]string{"--url", fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}, "connection refused"},
		"no answer":    {[]string{"--url", stuck.URL}, "context deadline exceeded"},
		"bad url":      {[]string{"--url", "127.0.0.1:3000"}, "not an http:// or https:// URL"},
		"bad config":   {[]string{"--config", writeFile(t, "prot: 3000\n")}, `unknown key "prot"`},
	} {
		t.Run(name, func(t *testing.T) {
			args := tc.args
			if args[0] != "health" {
				args = append([]string{"health"}, args...)
			}
			start := time.Now()
			code, stdout, stderr := runCmd(args...)
			require.Less(t, time.Since(start), healthTimeout+2*time.Second)
			require.Equal(t, 1, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}

	code, _, stderr := runCmd("health", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `unexpected argument "extra"`)
}

// The configured listener is asked where it can be reached from here:
// loopback when it listens on every interface.
func TestHealthProbeHost(t *testing.T) {
	for listen, want := range map[string]string{"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1", "[::]": "::1",
		"127.0.0.2": "127.0.0.2", "[::1]": "::1", "localhost": "localhost"} {
		require.Equal(t, want, probeHost(config.Config{Listen: listen}), listen)
	}
}
