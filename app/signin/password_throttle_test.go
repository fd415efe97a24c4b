package signin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackOffDoublesAndIsCapped(t *testing.T) {
	b := BackOff{Free: 5, Max: 5 * time.Minute, Keep: time.Hour}
	for n, want := range map[int]time.Duration{
		1: 0, 5: 0, 6: time.Second, 7: 2 * time.Second, 8: 4 * time.Second,
		14: 256 * time.Second, 15: 5 * time.Minute, 40: 5 * time.Minute, 1 << 30: 5 * time.Minute,
	} {
		require.Equal(t, want, b.delay(n), "failure %d", n)
	}
}

func TestThrottleBucketsHideAddressesAndIPs(t *testing.T) {
	k := keysOf("alice@example.com", "203.0.113.7")
	for _, b := range []string{k.pair, k.client, k.network, k.account, k.known} {
		require.NotContains(t, b, "alice")
		require.NotContains(t, b, "203.0.113")
		require.Regexp(t, `^pw:[a-z0-9]+:[0-9a-f]{64}$`, b)
	}
	require.NotEqual(t, k.pair, k.known, "same parts, other tier")
	// An IPv6 client is counted by its /64.
	a, b := keysOf("a@example.com", "2001:db8::1"), keysOf("a@example.com", "2001:db8::ffff")
	require.Equal(t, a.client, b.client)
	require.Equal(t, a.pair, b.pair)
	require.NotEqual(t, a.client, keysOf("a@example.com", "2001:db8:0:1::1").client)
	// Its /64s count in their /48's network bucket, IPv4 addresses in their /24's.
	require.Equal(t, a.network, keysOf("b@example.com", "2001:db8:0:ffff::1").network)
	require.NotEqual(t, a.network, keysOf("a@example.com", "2001:db8:1::1").network)
	require.Equal(t, k.network, keysOf("b@example.com", "203.0.113.200").network)
	require.NotEqual(t, k.network, keysOf("a@example.com", "203.0.114.7").network)
	require.Empty(t, keysOf("a@example.com", "pipe").network, "no IP, no network")
}
