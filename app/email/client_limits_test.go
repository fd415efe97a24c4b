package email

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// One client has its allowance, counted per IPv4 address and IPv6 /64,
// and its network (/24, /48) five times that; a refusal spends nothing,
// and the buckets are not an e-mail provider's.
func TestClientLimits(t *testing.T) {
	s := store(t)
	l, err := NewClientLimits(ClientLimitConfig{Name: "oidc:authorize", PerClient: 2}, s)
	require.NoError(t, err)
	now := time.Unix(1_700_000_000, 0)
	allow := func(ip string) (bool, string) {
		t.Helper()
		ok, why, err := l.Allow(context.Background(), ip, now)
		require.NoError(t, err)
		return ok, why
	}
	for _, ip := range []string{"2001:db8:1:1::1", "[2001:db8:1:1::2]:443"} {
		ok, _ := allow(ip)
		require.True(t, ok, ip)
	}
	ok, why := allow("2001:db8:1:1:ffff::9") // the same /64
	require.False(t, ok)
	require.Equal(t, "per-client limit reached for 2001:db8:1:1::/64", why)
	for i := range 8 { // other /64s of the /48: 10 in all
		ok, why := allow(fmt.Sprintf("2001:db8:1:%x::1", 0xa+i))
		require.True(t, ok, "%d %s", i, why)
	}
	ok, why = allow("2001:db8:1:ff::1")
	require.False(t, ok)
	require.Equal(t, "per-network limit reached for 2001:db8:1::/48", why)

	ok, _ = allow("192.0.2.1")
	require.True(t, ok)
	// The e-mail limits of a provider on the same store are untouched.
	e := limitsOn(t, s, LimitConfig{Provider: "oidc", PerIP: 1}, nil)
	sent, _ := e.allow(t, "a@example.com", "2001:db8:1:1::1", now)
	require.True(t, sent)

	_, err = NewClientLimits(ClientLimitConfig{Name: "oidc"}, s)
	require.Error(t, err, "a name an e-mail provider could have")
	_, err = NewClientLimits(ClientLimitConfig{Name: "x:y"}, nil)
	require.Error(t, err)
	off, err := NewClientLimits(ClientLimitConfig{Name: "x:y", Disabled: true}, nil)
	require.NoError(t, err)
	ok, _, err = off.Allow(context.Background(), "192.0.2.1", now)
	require.NoError(t, err)
	require.True(t, ok)
}

// A counter that cannot be asked refuses with an outage that names these
// limits, not the e-mail limits (the OpenID Provider's authorization
// requests share the counters).
func TestClientLimitsStoreUnavailable(t *testing.T) {
	s := store(t)
	l, err := NewClientLimits(ClientLimitConfig{Name: "oidc:authorize"}, s)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	ok, _, err := l.Allow(context.Background(), "192.0.2.1", time.Unix(1_700_000_000, 0))
	require.False(t, ok)
	require.ErrorContains(t, err, "client rate limits oidc:authorize: ")
	require.NotContains(t, err.Error(), "e-mail")
	var down CounterDown
	require.ErrorAs(t, err, &down)
	require.True(t, down.Unavailable())
}
