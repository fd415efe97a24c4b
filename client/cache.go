package client

import (
	"crypto/sha256"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheKey is the SHA-256 of the forwarded Cookie header: the cache and the
// in-flight lookups never hold a session token, only its hash.
type cacheKey [sha256.Size]byte

func keyOf(cookieHeader string) cacheKey { return sha256.Sum256([]byte(cookieHeader)) }

// answer is one cached reply of GET /session: user nil means signed out.
type answer struct {
	user     *User
	deadline time.Time // the answer is not used from this instant on
}

// cache remembers latchkey's answers for a short while: at most size
// entries (least recently used evicted first), each until its own deadline.
// Safe for concurrent use.
type cache struct {
	entries *lru.Cache[cacheKey, answer]
	ttl     time.Duration // signed-in answers
	negTTL  time.Duration // signed-out answers ({})
	now     func() time.Time
}

func newCache(size int, ttl, negTTL time.Duration, now func() time.Time) (*cache, error) {
	entries, err := lru.New[cacheKey, answer](size)
	if err != nil {
		return nil, err
	}
	return &cache{entries: entries, ttl: ttl, negTTL: negTTL, now: now}, nil
}

// get returns a live answer for k; an expired one is dropped.
func (c *cache) get(k cacheKey) (*User, bool) {
	a, ok := c.entries.Get(k)
	if !ok {
		return nil, false
	}
	if !c.now().Before(a.deadline) {
		c.entries.Remove(k)
		return nil, false
	}
	return a.user, true
}

// put stores u (nil: signed out) for the time to live of its kind, and never
// past the session's own expiry.
func (c *cache) put(k cacheKey, u *User) {
	ttl := c.ttl
	if u == nil {
		ttl = c.negTTL
	}
	if ttl <= 0 {
		return
	}
	deadline := c.now().Add(ttl)
	if u != nil && !u.Expires.IsZero() && u.Expires.Before(deadline) {
		deadline = u.Expires
	}
	c.entries.Add(k, answer{user: u, deadline: deadline})
}

func (c *cache) len() int { return c.entries.Len() }
