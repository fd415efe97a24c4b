package multi_test

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/metrics/metricstest"
)

// Helpers of the operations tests (health, metrics, logs): one more
// instance with environment of its own, and the endpoints at the root of
// its listener and on its metrics listener.

// startWith starts one more instance on dbURL with extra environment
// (METRICS_ADDR, LOG_FORMAT, ...; later values win), waits until it
// answers and puts it behind the proxy.
func (c *cluster) startWith(name, dbURL string, extra ...string) *instance {
	c.t.Helper()
	port := freePort(c.t)
	in, err := c.spawn(name, port, append(c.env(port, dbURL), extra...))
	require.NoError(c.t, err)
	in.waitReady(c.t)
	c.proxy.add(in.origin)
	c.nodes = append(c.nodes, in)
	return in
}

// withMetrics is the environment of an instance with a metrics listener
// on a free loopback port, and that listener's /metrics URL.
func withMetrics(t *testing.T) (env, metricsURL string) {
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	return "METRICS_ADDR=" + addr, "http://" + addr + "/metrics"
}

// root is GET or HEAD of a path at the root of in's listener.
func (b *browser) root(in *instance, method, path string) resp {
	b.t.Helper()
	req, err := http.NewRequest(method, in.origin+path, nil)
	require.NoError(b.t, err)
	r, err := b.do(req)
	require.NoError(b.t, err, "%s %s", method, path)
	return r
}

// scrape reads the metrics listener with Prometheus's text parser.
func scrape(t *testing.T, metricsURL string) metricstest.Samples {
	t.Helper()
	res, err := http.Get(metricsURL)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain"), res.Header.Get("Content-Type"))
	return metricstest.Parse(t, res.Body)
}

// waitStatus polls GET path at the root of in until it answers want.
func (b *browser) waitStatus(in *instance, path string, want int) resp {
	b.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		r := b.root(in, http.MethodGet, path)
		if r.StatusCode == want {
			return r
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("GET %s: %d %s, want %d", path, r.StatusCode, r.body, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sqliteURL is a SQLite DATABASE_URL in the cluster's folder.
func (c *cluster) sqliteURL(name string) string { return filepath.Join(c.dir, name) }
