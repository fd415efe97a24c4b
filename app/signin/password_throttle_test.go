package signin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models/throttlestore"
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
	k := keysOf("alice@example.com", "user-1", "203.0.113.7")
	for _, b := range []string{k.pair, k.client, k.network, k.account, k.known} {
		require.NotContains(t, b, "alice")
		require.NotContains(t, b, "user-1")
		require.NotContains(t, b, "203.0.113")
		require.Regexp(t, `^pw:[a-z0-9-]+:[0-9a-f]{64}$`, b)
	}
	// The known mark is the user's: another user of the address (it
	// changed hands) has another; an unknown address has none.
	require.NotEqual(t, k.known, keysOf("alice@example.com", "user-2", "203.0.113.7").known)
	require.NotEqual(t, k.known, keysOf("alice@example.com", "user-1", "203.0.113.8").known)
	require.Equal(t, k.known, keysOf("new@example.com", "user-1", "203.0.113.7").known, "an e-mail change keeps it")
	require.Empty(t, keysOf("alice@example.com", "", "203.0.113.7").known)
	require.NotEqual(t, k.known, throttleBucket("known", "alice@example.com", "203.0.113.7"), "the address's old marks count no more")
	// An IPv6 client is counted by its /64.
	a, b := keysOf("a@example.com", "u", "2001:db8::1"), keysOf("a@example.com", "u", "2001:db8::ffff")
	require.Equal(t, a.client, b.client)
	require.Equal(t, a.pair, b.pair)
	require.NotEqual(t, a.client, keysOf("a@example.com", "u", "2001:db8:0:1::1").client)
	// Its /64s count in their /48's network bucket, IPv4 addresses in their /24's.
	require.Equal(t, a.network, keysOf("b@example.com", "u", "2001:db8:0:ffff::1").network)
	require.NotEqual(t, a.network, keysOf("a@example.com", "u", "2001:db8:1::1").network)
	require.Equal(t, k.network, keysOf("b@example.com", "u", "203.0.113.200").network)
	require.NotEqual(t, k.network, keysOf("a@example.com", "u", "203.0.114.7").network)
	require.Empty(t, keysOf("a@example.com", "u", "pipe").network, "no IP, no network")

	// Users without an address (the password page of one signed up by a
	// provider that gave none) are counted apart, by user id, not in one
	// bucket of the empty address; never in an address's either.
	x, y := keysOf("", "user-1", "203.0.113.7"), keysOf("", "user-2", "203.0.113.7")
	require.NotEqual(t, x.account, y.account)
	require.NotEqual(t, x.pair, y.pair)
	require.NotEqual(t, x.account, keysOf("user-1", "", "203.0.113.7").account)
	require.NotEqual(t, x.pair, keysOf("user-1", "", "203.0.113.7").pair)
}

// A client is known to a user while the mark of the user's sign-in from
// it (a row living KnownFor from then) is not older than the user's "not
// before" time (the same second counts, as for sessions); without the
// revocations copy (no Devices) no mark is trusted.
func TestKnownIPEndsWithRevocation(t *testing.T) {
	signedIn := time.Unix(1_700_000_000, 0)
	mark := map[string]throttlestore.PasswordThrottle{"m": {Bucket: "m", Expires: signedIn.Add(KnownFor).UnixMicro()}}
	for _, c := range []struct {
		name   string
		revs   Revocations
		bucket string
		want   bool
	}{
		{"no revocation", notBefore{}, "m", true},
		{"another user's", notBefore{"bob": signedIn.Unix() + 1}, "m", true},
		{"same second", notBefore{"ann": signedIn.Unix()}, "m", true},
		{"revoked after it", notBefore{"ann": signedIn.Unix() + 1}, "m", false},
		{"no mark", notBefore{}, "other", false},
		{"no user", notBefore{}, "", false},
		{"no revocations copy", nil, "m", false},
	} {
		th := NewThrottle(nil)
		if c.revs != nil {
			d, err := NewDevices([]string{"a-secret-0123456789abcdef0123456789abcdef"}, KnownFor, c.revs)
			require.NoError(t, err)
			th.Devices = d
		}
		require.Equal(t, c.want, th.knownIP(mark, c.bucket, "ann"), c.name)
	}
}
