package client

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clock is a hand-moved time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestCache(t *testing.T, size int, ttl, negTTL time.Duration) (*cache, *clock) {
	t.Helper()
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	c, err := newCache(size, ttl, negTTL, clk.now)
	require.NoError(t, err)
	return c, clk
}

func TestCacheHoldsAtMostSizeEntriesDroppingTheLeastRecentlyUsed(t *testing.T) {
	c, _ := newTestCache(t, 3, time.Minute, time.Minute)
	for i := range 10 {
		c.put(keyOf(fmt.Sprint("cookie", i)), &User{Email: fmt.Sprint(i)})
		require.LessOrEqual(t, c.len(), 3)
	}
	require.Equal(t, 3, c.len())
	_, ok := c.get(keyOf("cookie6"))
	require.False(t, ok, "evicted")
	// Reading 7 makes 8 the oldest.
	u, ok := c.get(keyOf("cookie7"))
	require.True(t, ok)
	require.Equal(t, "7", u.Email)
	c.put(keyOf("cookie10"), &User{})
	_, ok = c.get(keyOf("cookie8"))
	require.False(t, ok, "the least recently used went first")
	_, ok = c.get(keyOf("cookie7"))
	require.True(t, ok)
}

func TestCacheAnswersExpire(t *testing.T) {
	c, clk := newTestCache(t, 10, 5*time.Second, time.Second)
	signedIn, signedOut := keyOf("a"), keyOf("b")
	c.put(signedIn, &User{Email: "a@example.com"})
	c.put(signedOut, nil)

	clk.t = clk.t.Add(999 * time.Millisecond)
	u, ok := c.get(signedOut)
	require.True(t, ok)
	require.Nil(t, u, "a cached signed-out answer")
	clk.t = clk.t.Add(time.Millisecond)
	_, ok = c.get(signedOut)
	require.False(t, ok, "negative answers live NegativeCacheTTL")

	clk.t = clk.t.Add(3999 * time.Millisecond)
	_, ok = c.get(signedIn)
	require.True(t, ok)
	clk.t = clk.t.Add(time.Millisecond)
	_, ok = c.get(signedIn)
	require.False(t, ok, "signed-in answers live CacheTTL")
	require.Equal(t, 0, c.len(), "expired entries are dropped when met")
}

func TestCacheNeverOutlivesTheSession(t *testing.T) {
	c, clk := newTestCache(t, 10, time.Minute, time.Second)
	k := keyOf("ending")
	c.put(k, &User{Expires: clk.t.Add(2 * time.Second)})
	clk.t = clk.t.Add(2 * time.Second)
	_, ok := c.get(k)
	require.False(t, ok)
}

func TestCacheOffForAKindWithNonPositiveTTL(t *testing.T) {
	c, _ := newTestCache(t, 10, time.Minute, -1)
	c.put(keyOf("x"), nil)
	require.Equal(t, 0, c.len())
}

func TestCacheKeyIsAHashNotTheCookie(t *testing.T) {
	k := keyOf("next-auth.session-token=secret-token")
	require.NotContains(t, string(k[:]), "secret-token")
	require.Equal(t, k, keyOf("next-auth.session-token=secret-token"))
	require.NotEqual(t, k, keyOf("next-auth.session-token=secret-tokem"))
}
