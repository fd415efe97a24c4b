package openid

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
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

// BenchmarkClientAuthentication: the time of a wrong secret by where the
// client id is, on a real SQLite store (the read is most of the cost):
// go test -run '^$' -bench ClientAuthentication ./app/openid/. Measured
// (2 shared cores): stored 67-115 µs (the row read and built), unknown
// 38-62 µs (a read that finds none; the stand-in's compare is ~1 µs),
// configured 0.4-0.5 µs (no read). Left uneven on purpose
// (AuthorizeClientIDSecret). A benchmark, not a timed test: this machine
// is shared and noisy.
func BenchmarkClientAuthentication(b *testing.B) {
	db, err := models.Open(filepath.Join(b.TempDir(), "bench.db"))
	require.NoError(b, err)
	b.Cleanup(func() { _ = db.Close() })
	store := openidstore.New(db)
	ctx := context.Background()
	require.NoError(b, store.AddClient(ctx, &openidstore.Client{ID: "stored", Name: "Stored", SecretHash: hashToken("right"),
		RedirectURIs: "https://app.example.com/cb", Scopes: "openid email profile", CreatedAt: time.Now()}))
	set := Settings{Clients: []config.OpenIDClient{{ID: "configured", Secret: "right", RedirectURIs: []string{"https://app.example.com/cb"}}}}
	s, err := New(store, nil, set, []string{"0123456789abcdef0123456789abcdef"}, time.Now, slog.New(slog.DiscardHandler))
	require.NoError(b, err)
	require.NoError(b, s.AuthorizeClientIDSecret(ctx, "stored", "right"))
	require.NoError(b, s.AuthorizeClientIDSecret(ctx, "configured", "right"))
	for _, id := range []string{"stored", "configured", "nobody"} {
		b.Run(id, func(b *testing.B) {
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
