package openid

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// TestRedirectRegistered: a redirect URI matches exactly; a native app's
// loopback one (an IP literal or localhost, as registered) on any port,
// nothing else about it changed.
func TestRedirectRegistered(t *testing.T) {
	native := &Client{Redirects: []string{"com.example.app:/cb", "http://127.0.0.1:9/native", "http://localhost/loop?x=1"}}
	web := &Client{Redirects: []string{"https://app.example.com/cb", "http://127.0.0.1:9/web"}}
	for _, tc := range []struct {
		c    *Client
		uri  string
		want bool
	}{
		{native, "com.example.app:/cb", true},
		{native, "http://127.0.0.1:9/native", true},
		{native, "http://127.0.0.1:5555/native", true},
		{native, "http://127.0.0.1/native", true},
		{native, "http://localhost:4000/loop?x=1", true},
		{native, "com.example.app:/other", false},
		{native, "http://localhost:5555/native", false},
		{native, "http://127.0.0.2:5555/native", false},
		{native, "http://[::1]:5555/native", false},
		{native, "https://127.0.0.1:5555/native", false},
		{native, "http://x@127.0.0.1:5555/native", false},
		{native, "http://127.0.0.1:5555/native#f", false},
		{native, "http://127.0.0.1:5555/native?y=2", false},
		{native, "http://127.0.0.1:4000/loop?x=1", false},
		{web, "https://app.example.com/cb", true},
		{web, "http://127.0.0.1:9/web", true},
		{web, "http://127.0.0.1:5555/web", false},
		{web, "https://app.example.com/cb/", false},
	} {
		if got := tc.c.redirectRegistered(tc.uri); got != tc.want {
			t.Errorf("redirectRegistered(%q) = %v, want %v", tc.uri, got, tc.want)
		}
		// The same rule for post-logout redirect URIs.
		c := &Client{Redirects: tc.c.Redirects, PostLogouts: tc.c.Redirects}
		if got := c.postLogoutRegistered(tc.uri); got != tc.want {
			t.Errorf("postLogoutRegistered(%q) = %v, want %v", tc.uri, got, tc.want)
		}
	}
}

// clientsOnly is a Store with one stored client, "stored"; every other
// method is unused here.
type clientsOnly struct {
	Store
	row *openidstore.Client
}

func (s clientsOnly) Client(_ context.Context, id string) (*openidstore.Client, error) {
	if id == s.row.ID {
		return s.row, nil
	}
	return nil, ErrNotFound
}

// BenchmarkClientAuthentication: an unknown client id does the work of a
// wrong secret (a stored client's: its row read, built and its secret
// compared, against a stand-in), so the time of the answer does not tell
// which client ids exist. Compare unknown with wrong in one run (go test
// -run '^$' -bench ClientAuthentication ./app/openid/): before the stand-in,
// unknown took 0.35-0.43 of wrong; with it 0.95-1.1. A benchmark, not a
// timed test: this machine is shared and noisy.
func BenchmarkClientAuthentication(b *testing.B) {
	row := &openidstore.Client{ID: "stored", Name: "Stored", SecretHash: hashToken("right"),
		RedirectURIs: "https://app.example.com/cb", Scopes: "openid email profile"}
	s, err := New(clientsOnly{row: row}, nil, Settings{}, []string{"0123456789abcdef0123456789abcdef"}, time.Now, slog.New(slog.DiscardHandler))
	require.NoError(b, err)
	ctx := context.Background()
	require.NoError(b, s.AuthorizeClientIDSecret(ctx, "stored", "right"))
	for name, id := range map[string]string{"wrong": "stored", "unknown": "nobody"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if s.AuthorizeClientIDSecret(ctx, id, "wrong-secret-of-the-usual-length-0123456789") == nil {
					b.Fatal("authenticated")
				}
			}
		})
	}
}

// An unknown client id is refused whatever the secret, the stand-in's
// included: its hash is of a random secret no caller knows.
func TestUnknownClientIsRefused(t *testing.T) {
	s, err := New(clientsOnly{row: &openidstore.Client{ID: "stored"}}, nil, Settings{}, []string{"0123456789abcdef0123456789abcdef"}, time.Now, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	for _, secret := range []string{"", "wrong", NewClientSecret()} {
		require.Error(t, s.AuthorizeClientIDSecret(context.Background(), "nobody", secret))
	}
}
