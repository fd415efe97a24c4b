package email

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxKeys bounds the memory of one Limiter (about 100 bytes a key).
const DefaultMaxKeys = 100_000

// Limiter allows n events per window for each key (an address, a client IP)
// with one golang.org/x/time/rate token bucket per key: a burst of n, then
// one more every window/n. A key idle for a whole window has a full bucket
// again, so forgetting it changes nothing; that is how idle keys are evicted
// without a background goroutine.
type Limiter struct {
	mu      sync.Mutex
	every   rate.Limit
	burst   int
	window  time.Duration
	maxKeys int
	keys    map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// NewLimiter allows n events per window per key; n and window must be positive.
func NewLimiter(n int, window time.Duration) *Limiter {
	return &Limiter{
		every:   rate.Every(window / time.Duration(n)),
		burst:   n,
		window:  window,
		maxKeys: DefaultMaxKeys,
		keys:    map[string]*bucket{},
	}
}

// Allow reports whether key may act at now, and counts the event if so.
// When the table is full of keys active within the window, a new key is
// refused: the limiter fails closed rather than growing without bound.
func (l *Limiter) Allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= l.window {
		l.sweep(now)
	}
	b, ok := l.keys[key]
	if !ok {
		if len(l.keys) >= l.maxKeys {
			l.sweep(now)
			if len(l.keys) >= l.maxKeys {
				return false
			}
		}
		b = &bucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.keys[key] = b
	}
	b.seen = now
	return b.lim.AllowN(now, 1)
}

// Len is the number of keys held, for tests.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

func (l *Limiter) sweep(now time.Time) {
	for k, b := range l.keys {
		if now.Sub(b.seen) >= l.window {
			delete(l.keys, k)
		}
	}
	l.swept = now
}

// ClientKey is the rate-limit key of a remote address ("host:port" or a bare
// IP): the IP for IPv4, its /64 for IPv6, since one subscriber usually holds
// a whole /64 and could otherwise rotate through it.
func ClientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
