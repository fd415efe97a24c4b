package app_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// postSession is useSession().update(data): JSON {csrfToken, data}.
func postSession(t *testing.T, e *env, csrfToken string, data any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"csrfToken": csrfToken, "data": data})
	req, _ := http.NewRequest(http.MethodPost, e.url("/session"), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res := e.do(e.client, req)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.body), &out))
	return res.StatusCode, out
}

func TestSessionUpdate(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startOIDC(t, func(c *config.Config) { c.Session.Strategy = strategy }, nil)
			e.signIn(e.client, "idp", "/home")

			status, out := postSession(t, e, "wrong", map[string]any{"name": "x"})
			require.Equal(t, http.StatusBadRequest, status)
			require.Equal(t, map[string]any{}, out)

			status, out = postSession(t, e, e.csrf(e.client), map[string]any{"name": "x"})
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, userEmail(e.session(e.client)), userEmail(out), "the default hooks ignore update data, as next-auth's")
		})
	}
}

// With a JWT hook that applies update data (the usual next-auth recipe), the
// new name is stored in the cookie and survives the next GET /session.
func TestSessionUpdateThroughJWTHook(t *testing.T) {
	hooks := &signin.Hooks{JWT: func(token map[string]any, in signin.JWTInput) map[string]any {
		if in.Trigger == "update" {
			var d struct{ Name string }
			if json.Unmarshal(in.Update, &d) == nil && d.Name != "" {
				token["name"] = d.Name
			}
		}
		return token
	}}
	e := startOIDC(t, func(c *config.Config) { c.Session.Strategy = config.StrategyJWT }, hooks)
	e.signIn(e.client, "idp", "/home")
	status, out := postSession(t, e, e.csrf(e.client), map[string]any{"name": "Renamed"})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "Renamed", out["user"].(map[string]any)["name"])
	require.Equal(t, "Renamed", e.session(e.client)["user"].(map[string]any)["name"])
}
