package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenIDAuthorizeParametersThatDoNotParse: an authorization request
// whose parameters do not decode (max_age not a number, a bad %-escape in
// a posted form) is a plain 400 with a short notice, as the provider's
// other refusals, logged once through the app's logger with the detail;
// nothing stored. The body was the library's whole internal error
// ("ErrorType=invalid_request Description=cannot parse auth request
// Parent=schema: error converting value for \"max_age\""), and the line
// went to slog's default logger, not the app's.
func TestOpenIDAuthorizeParametersThatDoNotParse(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		r := e.relyingParty("app", rpSecret)
		requests := e.authRequests()
		target, _ := r.authorizeURL("max_age", "soon")
		mark := len(e.logs.String())
		for _, res := range []resp{
			e.get(e.browser(), target),
			e.rawDo(http.MethodPost, r.endpoint("authorization_endpoint"), "", strings.NewReader("client_id=app&max_age=%zz"),
				"Content-Type", "application/x-www-form-urlencoded"),
		} {
			require.Equal(t, http.StatusBadRequest, res.StatusCode, res.body)
			require.Empty(t, res.location())
			require.Equal(t, "malformed request: a parameter is not valid", strings.TrimSpace(res.body))
		}
		logs := e.logs.String()[mark:]
		require.Equal(t, 2, strings.Count(logs, "openid: authorization request does not parse"), logs)
		require.Contains(t, logs, `max_age`)
		require.Equal(t, requests, e.authRequests())
	})
}
