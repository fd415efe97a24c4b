package multi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// With LOG_FORMAT=json every line a real process writes is a JSON object,
// and every request has one access line: method, route pattern, status,
// duration and request id, the id echoed in X-Request-Id. A trusted
// proxy's X-Request-Id is kept; from anyone else it is replaced. No line
// carries the session cookie, the e-mail link's token or a full address.
func TestJSONAccessLog(t *testing.T) {
	c := newCluster(t, pgtest.NewDatabase(t, adminURL))
	untrusted := c.config
	c.config = filepath.Join(c.dir, "trusting.yaml")
	body, err := os.ReadFile(untrusted)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(c.config, body, 0o600))
	c.appendConfig("trusted_proxies: [127.0.0.1/32]\n")
	a := c.startWith("A", c.dbURL, "LOG_FORMAT=json", "LOG_LEVEL=info")
	c.config = untrusted
	c.appendConfig("trusted_proxies: [10.99.0.0/16]\n")
	b := c.startWith("B", c.dbURL, "LOG_FORMAT=json", "LOG_LEVEL=info")

	br := c.browser()
	c.signInByEmail(br, a, "dora@example.com")
	link := c.linkFor("dora@example.com")
	token := mustURL(t, link).Query().Get("token")
	cookie := br.cookie(sessionCookie)
	require.NotEmpty(t, token)
	require.NotEmpty(t, cookie)

	send := func(in *instance, id string) resp {
		req, err := http.NewRequest(http.MethodGet, in.url("/session"), nil)
		require.NoError(t, err)
		req.Header.Set("X-Request-Id", id)
		r, err := br.do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.StatusCode)
		return r
	}
	require.Equal(t, "trace-from-proxy-1", send(a, "trace-from-proxy-1").Header.Get("X-Request-Id"), "A trusts its peer")
	generated := send(b, "trace-from-proxy-2").Header.Get("X-Request-Id")
	require.Regexp(t, `^[0-9a-f]{32}$`, generated, "B does not trust its peer")
	replaced := send(a, "not sane").Header.Get("X-Request-Id")
	require.Regexp(t, `^[0-9a-f]{32}$`, replaced, "an insane id is replaced")

	access := map[string]map[string]any{} // request_id → access line
	for _, in := range []*instance{a, b} {
		in.stop(t)
		logs := in.logs.String()
		for _, secret := range []string{token, cookie, "dora@example.com", "trace-from-proxy-2"} {
			require.NotContains(t, logs, secret, "instance %s", in.name)
		}
		for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &v), "instance %s: not a JSON line: %s", in.name, line)
			require.Contains(t, v, "level")
			if v["msg"] == "request" {
				id, _ := v["request_id"].(string)
				require.NotEmpty(t, id, line)
				require.NotContains(t, access, id, "one line per request")
				access[id] = v
			}
		}
	}
	for id, route := range map[string]string{"trace-from-proxy-1": "/api/auth/session", generated: "/api/auth/session", replaced: "/api/auth/session"} {
		line, ok := access[id]
		require.True(t, ok, "an access line for %s", id)
		require.Equal(t, route, line["route"])
		require.Equal(t, "GET", line["method"])
		require.Equal(t, 200.0, line["status"])
		require.Contains(t, line, "duration")
	}
	routes := map[any]bool{}
	for _, line := range access {
		routes[line["route"]] = true
	}
	require.True(t, routes["/api/auth/callback/:provider"], "the link's request is logged by its pattern: %v", routes)
	require.True(t, routes["/api/auth/signin/:provider"], "%v", routes)
	require.Contains(t, a.logs.String(), `"to":"d***@example.com"`, "the delivery line masks the address")
}
