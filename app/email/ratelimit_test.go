package email

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Bucket names hold the provider and tier in clear and nothing of the
// address or client: one HMAC over the parts, which are kept apart.
func TestBucketKey(t *testing.T) {
	pair := bucketKey("email", "addr", "alice@example.com", "192.0.2.7")
	require.Regexp(t, `^email:addr:[0-9a-f]{64}$`, pair)
	require.NotContains(t, pair, "alice")
	require.NotContains(t, pair, "192.0.2.7")
	require.Equal(t, pair, bucketKey("email", "addr", "alice@example.com", "192.0.2.7"), "stable: every instance names it alike")
	require.Equal(t, "email:global", bucketKey("email", "global"))
	for _, other := range []string{
		bucketKey("other", "addr", "alice@example.com", "192.0.2.7"),
		bucketKey("email", "ceiling", "alice@example.com", "192.0.2.7"),
		bucketKey("email", "addr", "alice@example.com1", "92.0.2.7"),
		bucketKey("email", "addr", "alice@example.com192.0.2.7"),
	} {
		require.NotEqual(t, pair, other)
	}
}

func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:5555":                "192.0.2.7",
		"192.0.2.7":                     "192.0.2.7",
		"[::ffff:192.0.2.7]:80":         "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443":    "2001:db8:1:2::/64",
		"2001:db8:1:2:3:4:5:6":          "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1%eth0]:1": "2001:db8:1:2::/64",
		"pipe":                          "pipe",
	} {
		require.Equal(t, want, clientKey(in), in)
	}
}

func TestNetworkKey(t *testing.T) {
	for in, want := range map[string]string{
		"2001:db8:1:2:3:4:5:6":      "2001:db8:1::/48",
		"[2001:db8:1:ffff::1]:443":  "2001:db8:1::/48",
		"[2001:db8:1:2::1%eth0]:80": "2001:db8:1::/48",
		"192.0.2.7":                 "192.0.2.0/24",
		"[::ffff:192.0.2.7]:80":     "192.0.2.0/24",
	} {
		got, ipv6, ok := NetworkKey(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
		require.Equal(t, strings.Contains(want, ":"), ipv6, in)
	}
	for _, in := range []string{"pipe", ""} {
		_, _, ok := NetworkKey(in)
		require.False(t, ok, "%q is no IP", in)
	}
}
