package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenIDDeadLinksAreWarnings: a dead link of the OpenID Provider's
// pages — an unknown authorization request at continue, the callback or
// the consent form, a forged logout request — is the 400 dead-link page
// and one "request failed" warning naming its step, never an error line:
// anyone can send these, and the error log is for what an operator must
// mend.
func TestOpenIDDeadLinksAreWarnings(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.browser()
		for _, tc := range []struct {
			name, step string
			send       func() resp
		}{
			{"continue", "authorization request", func() resp { return e.get(c, "/oidc/continue?id=x") }},
			{"callback", "authorization request", func() resp { return e.get(c, "/oidc/authorize/callback?id=x") }},
			{"consent", "authorization request", func() resp {
				return e.post(c, "/oidc/consent", url.Values{"csrfToken": {e.csrf(c)}, "id": {"x"}, "decision": {"allow"}})
			}},
			{"logout page", "logout request", func() resp { return e.get(c, "/oidc/logout?logout=junk") }},
			{"logout form", "logout request", func() resp {
				return e.post(c, "/oidc/logout", url.Values{"csrfToken": {e.csrf(c)}, "logout": {"junk"}, "decision": {"signout"}})
			}},
		} {
			mark := len(e.logs.String())
			res := tc.send()
			require.Equal(t, http.StatusBadRequest, res.StatusCode, tc.name)
			lines := logsAfter(e, mark, `msg="request failed"`)
			require.NotContains(t, lines, "level=ERROR", tc.name)
			var failed []string
			for line := range strings.Lines(lines) {
				if strings.Contains(line, `msg="request failed"`) {
					failed = append(failed, line)
				}
			}
			require.Len(t, failed, 1, "%s: %s", tc.name, lines)
			require.Contains(t, failed[0], "level=WARN", tc.name)
			require.Contains(t, failed[0], `step="`+tc.step+`"`, tc.name)
		}
	})
}
