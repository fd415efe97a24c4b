package email

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"
)

// tier counts events per key (a client, a network, an address) with one
// golang.org/x/time/rate token bucket a key: a burst of n, then one more
// every window/n. It remembers at most maxKeys keys and forgets the least
// recently used first, so a full table lets a new client in with a full
// bucket instead of refusing everyone, while a key in use (an abuser still
// knocking) stays and stays limited. Not safe for concurrent use: Limits
// holds one lock over all its tiers.
type tier struct {
	every  rate.Limit
	burst  int
	window time.Duration
	keys   *simplelru.LRU[string, *bucket]
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// newTier allows n events per window per key; all three must be positive.
func newTier(n int, window time.Duration, maxKeys int) (*tier, error) {
	keys, err := simplelru.NewLRU[string, *bucket](maxKeys, nil)
	if err != nil {
		return nil, fmt.Errorf("rate-limit table of %d keys: %w", maxKeys, err)
	}
	return &tier{every: rate.Every(window / time.Duration(n)), burst: n, window: window, keys: keys}, nil
}

// get returns key's bucket, a full one for a key not held, and marks the
// key used at now. Keys idle for a whole window are dropped first: their
// buckets are full again, so forgetting them changes nothing, and the LRU
// order makes that cheap (the idle ones are the oldest).
func (t *tier) get(key string, now time.Time) *bucket {
	for {
		_, b, ok := t.keys.GetOldest()
		if !ok || now.Sub(b.seen) < t.window {
			break
		}
		t.keys.RemoveOldest()
	}
	b, ok := t.keys.Get(key)
	if !ok {
		b = &bucket{lim: rate.NewLimiter(t.every, t.burst)}
		t.keys.Add(key, b) // evicts the least recently used key when full
	}
	b.seen = now
	return b
}

// has reports whether the bucket holds a whole event at now, without
// spending it: Limits spends only once every tier has agreed.
func (b *bucket) has(now time.Time) bool { return b.lim.TokensAt(now) >= 1 }

// len is the number of keys held, for tests.
func (t *tier) len() int { return t.keys.Len() }

// clientKey is the rate-limit key of a client address ("host:port" or a bare
// IP): the IP for IPv4, its /64 for IPv6, since one subscriber usually holds
// a whole /64 and could otherwise rotate through it.
func clientKey(remoteAddr string) string {
	ip, ok := parseIP(remoteAddr)
	if !ok {
		return remoteAddr
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// networkKey is the /48 of an IPv6 client, the usual allocation of one site:
// a client rotating through /64s still counts against it. IPv4 has none.
func networkKey(remoteAddr string) (string, bool) {
	ip, ok := parseIP(remoteAddr)
	if !ok || !ip.Is6() {
		return "", false
	}
	p, _ := ip.Prefix(48)
	return p.String(), true
}

func parseIP(remoteAddr string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap().WithZone(""), true
}
