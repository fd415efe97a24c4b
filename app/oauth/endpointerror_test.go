package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
)

// A token endpoint's failure is described by its status, content type and
// error code, never by its body: a failing provider (or a proxy in front
// of it) may echo the request, refresh token and all, or print terminal
// escapes into the log line (GET /token's ProviderUnavailable, a sign-in's
// OAuthCallback). The *oauth2.RetrieveError stays reachable (errors.As).
func TestTokenEndpointErrorsKeepTheBodyOut(t *testing.T) {
	body := map[string]string{
		"text/html":        "<h1>Bad gateway</h1> refresh_token=rt-secret-value \x1b[2J",
		"application/json": `{"error":"server_error\u001b[31m","error_description":"rt-secret-value"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.URL.Query().Get("ct")
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(body[ct]))
	}))
	defer srv.Close()
	for ct, want := range map[string]string{
		"text/html":        `refresh token: token endpoint answered HTTP 502 (text/html)`,
		"application/json": `refresh token: token endpoint answered HTTP 502 (application/json): error "server_error\x1b[31m"`,
	} {
		conf := &oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{TokenURL: srv.URL + "/token?ct=" + ct, AuthStyle: oauth2.AuthStyleInParams}}
		_, err := refresh(context.Background(), conf, srv.Client(), "rt-secret-value")
		require.Error(t, err)
		require.Equal(t, want, err.Error(), ct)
		var re *oauth2.RetrieveError
		require.True(t, errors.As(err, &re), ct)
		_, err = exchange(context.Background(), conf, srv.Client(), "code", "")
		require.NotContains(t, err.Error(), "rt-secret-value", ct)
	}
}
