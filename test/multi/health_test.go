package multi_test

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// The health checks of a real process: live while it serves, ready while
// the database answers. PostgreSQL stopped under a running instance makes
// it unready (503, and failed statements in latchkey_db_errors_total)
// without stopping it; started again, the instance is ready again, with
// no restart.
func TestHealthFollowsPostgreSQL(t *testing.T) {
	pg := ownServer(t)
	c := newCluster(t, pgtest.NewDatabase(t, pg.AdminURL))
	metricsEnv, metricsURL := withMetrics(t)
	a := c.startWith("A", c.dbURL, metricsEnv)
	br := c.browser()

	for _, method := range []string{http.MethodGet, http.MethodHead} {
		for _, path := range []string{"/health/live", "/health/ready"} {
			r := br.root(a, method, path)
			require.Equal(t, http.StatusOK, r.StatusCode, "%s %s", method, path)
			require.Empty(t, r.Header.Values("Set-Cookie"), "%s %s sets no cookie", method, path)
			if method == http.MethodGet {
				require.JSONEq(t, `{"status":"ok"}`, r.body)
			} else {
				require.Empty(t, r.body)
			}
		}
	}
	require.Zero(t, scrape(t, metricsURL).Value("latchkey_db_errors_total"))
	requireHealthCommand(t, a, 0, "/health/ready: ready")

	require.NoError(t, pg.Stop())
	r := br.waitStatus(a, "/health/ready", http.StatusServiceUnavailable)
	require.JSONEq(t, `{"status":"unavailable","reason":"database"}`, r.body)
	requireHealthCommand(t, a, 1, "/health/ready: not ready (503 Service Unavailable)")
	require.Equal(t, http.StatusOK, br.root(a, http.MethodGet, "/health/live").StatusCode, "alive all the same")
	require.Equal(t, "{}", br.get(a.url("/session")).body, "a GET /session meets the outage too")
	require.Positive(t, scrape(t, metricsURL).Value("latchkey_db_errors_total"), "the failed statements are counted")

	require.NoError(t, pg.Start())
	br.waitStatus(a, "/health/ready", http.StatusOK)
	requireHealthCommand(t, a, 0, "/health/ready: ready")
	c.signInByEmail(br, a, "back@example.com")
	require.True(t, a.running())
	require.Contains(t, a.logs.String(), "not ready: the database check failed")
	require.Contains(t, a.logs.String(), "ready again: the database answers")
}

// requireHealthCommand: `latchkey health --url` (a container's
// HEALTHCHECK) exits with code and says so in one line.
func requireHealthCommand(t *testing.T, in *instance, code int, line string) {
	t.Helper()
	cmd := exec.Command(binary, "health", "--url", in.origin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code == 0 {
		require.NoError(t, err, stderr.String())
	} else {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		require.Equal(t, code, exit.ExitCode(), stderr.String())
	}
	require.Empty(t, stdout.String())
	require.Equal(t, "latchkey health: "+in.origin+line+"\n", stderr.String())
}

// A SQLite instance is unready while its database file is not where it
// was opened (moved away by a careless clean-up, a volume gone): the open
// connections would go on writing to a file no one reads again. Put back,
// the instance is ready again.
func TestHealthFollowsTheSQLiteFile(t *testing.T) {
	c := newCluster(t, "postgres://latchkey@127.0.0.1/unused") // the instance runs on SQLite
	file := c.sqliteURL("instance.db")
	a := c.startWith("S", file)
	br := c.browser()
	br.waitStatus(a, "/health/ready", http.StatusOK)

	require.NoError(t, os.Rename(file, file+".moved"))
	r := br.waitStatus(a, "/health/ready", http.StatusServiceUnavailable)
	require.JSONEq(t, `{"status":"unavailable","reason":"database"}`, r.body)
	require.Equal(t, http.StatusOK, br.root(a, http.MethodGet, "/health/live").StatusCode)

	require.NoError(t, os.Rename(file+".moved", file))
	br.waitStatus(a, "/health/ready", http.StatusOK)
	c.signInByEmail(br, a, "sql@example.com")
	require.Equal(t, "sql@example.com", br.email(a))
}
