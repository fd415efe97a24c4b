package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// TestOpenIDRotatedSecretOverlap: after `clients rotate-secret` of a
// stored client, the relying party's previous secret keeps authenticating
// it at the token endpoints (here revocation, which answers 200 to an
// authenticated client whatever the token) until the overlap ends, by the
// service's clock, then only the new one does; a rotation without overlap
// ends the previous secret at once. It was refused at once, so every
// running relying party failed until redeployed.
func TestOpenIDRotatedSecretOverlap(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		ctx := context.Background()
		rules, err := openid.New(openidstore.New(e.app.Store()), nil, openid.Settings{Algorithm: "RS256"}, e.cfg.Secrets(), e.clock.Now, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		first, err := rules.AddClient(ctx, openid.NewClient{ID: "rotating", Name: "Rotating", RedirectURIs: []string{rpRedirect}})
		require.NoError(t, err)
		r := e.relyingParty("tool", rpSecret)
		status := func(secret string) int {
			return r.call(http.MethodPost, r.endpoint("revocation_endpoint"), url.Values{"token": {"nothing"}}, "Authorization", basicAuth("rotating", secret)).StatusCode
		}
		require.Equal(t, http.StatusOK, status(first))

		second, until, err := rules.RotateSecret(ctx, "rotating", time.Hour)
		require.NoError(t, err)
		require.Equal(t, e.clock.Now().Add(time.Hour), until)
		require.Equal(t, http.StatusOK, status(second), "the new secret")
		require.Equal(t, http.StatusOK, status(first), "the previous secret, during the overlap")
		require.Equal(t, http.StatusUnauthorized, status("wrong"))
		e.clock.Add(time.Hour - time.Second)
		require.Equal(t, http.StatusOK, status(first), "the previous secret, a second before the end")
		e.clock.Add(time.Second)
		require.Equal(t, http.StatusUnauthorized, status(first), "the previous secret, at the end")
		require.Equal(t, http.StatusOK, status(second))

		third, until, err := rules.RotateSecret(ctx, "rotating", 0)
		require.NoError(t, err)
		require.True(t, until.IsZero())
		require.Equal(t, http.StatusUnauthorized, status(second), "no overlap: the previous secret ends at once")
		require.Equal(t, http.StatusOK, status(third))
		_, _, err = rules.RotateSecret(ctx, "rotating", -time.Second)
		require.Error(t, err)
		require.Equal(t, http.StatusOK, status(third), "a refused rotation changes nothing")

		// `clients end-previous-secret`: the overlap ends at once.
		fourth, until, err := rules.RotateSecret(ctx, "rotating", time.Hour)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status(third))
		ended, err := rules.EndPreviousSecret(ctx, "rotating")
		require.NoError(t, err)
		require.True(t, until.Equal(ended), "%s, %s", until, ended)
		require.Equal(t, http.StatusUnauthorized, status(third), "the previous secret, ended early")
		require.Equal(t, http.StatusOK, status(fourth))
		ended, err = rules.EndPreviousSecret(ctx, "rotating")
		require.NoError(t, err)
		require.True(t, ended.IsZero(), "none left to end")
	})
}
