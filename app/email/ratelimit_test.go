package email

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mustTier(t *testing.T, n int, window time.Duration, maxKeys int) *tier {
	t.Helper()
	tr, err := newTier(n, window, maxKeys)
	require.NoError(t, err)
	return tr
}

// allow counts one event for key, as Limits does for a single tier.
func (t *tier) allow(key string, now time.Time) bool {
	b := t.get(key, now)
	return b.has(now) && b.lim.AllowN(now, 1)
}

func TestTierPerKeyWindow(t *testing.T) {
	l := mustTier(t, 5, time.Hour, 100)
	for i := range 5 {
		require.True(t, l.allow("a", t0), "event %d of 5", i+1)
	}
	require.False(t, l.allow("a", t0.Add(time.Minute)), "6th event within the window")
	require.True(t, l.allow("b", t0.Add(time.Minute)), "another key is not limited by a's events")
	// One event comes back every window/n (12 minutes).
	require.True(t, l.allow("a", t0.Add(12*time.Minute)), "one event after window/n")
	require.False(t, l.allow("a", t0.Add(13*time.Minute)), "two events after window/n")
}

func TestTierForgetsIdleKeys(t *testing.T) {
	l := mustTier(t, 2, time.Hour, 100)
	for i := range 50 {
		l.allow(fmt.Sprint("k", i), t0)
	}
	l.allow("late", t0.Add(59*time.Minute))
	require.Equal(t, 51, l.len())
	// A window later every key but "late" is idle and goes; a forgotten key
	// starts with a full bucket, exactly as if it had been kept.
	l.allow("k0", t0.Add(time.Hour+time.Second))
	require.Equal(t, 2, l.len(), "late and k0")
	require.True(t, l.allow("k0", t0.Add(time.Hour+2*time.Second)), "re-created key has its burst")
}

// Issue 9, finding 5: a full table used to refuse every new key (failing
// closed for everyone once 100,000 keys were live). Now the least recently
// used key is forgotten; a key still in use keeps its (empty) bucket.
func TestTierEvictsLeastRecentlyUsed(t *testing.T) {
	l := mustTier(t, 1, time.Hour, 3)
	require.True(t, l.allow("abuser", t0))
	require.True(t, l.allow("b", t0.Add(time.Second)))
	require.True(t, l.allow("c", t0.Add(2*time.Second)))
	require.False(t, l.allow("abuser", t0.Add(time.Minute)), "abuser knocks again: refused, and now the most recent")
	require.True(t, l.allow("new", t0.Add(2*time.Minute)), "a new client gets in when the table is full")
	require.Equal(t, 3, l.len())
	require.False(t, l.allow("abuser", t0.Add(3*time.Minute)), "the abuser was not the one forgotten")
	require.True(t, l.allow("b", t0.Add(4*time.Minute)), "b was forgotten: a full bucket again")
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
	} {
		got, ok := networkKey(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"192.0.2.7", "::ffff:192.0.2.7", "pipe", ""} {
		_, ok := networkKey(in)
		require.False(t, ok, "%q has no /48", in)
	}
}
