package providertokens

import (
	"context"
	"sync"
	"time"
)

// GET /session asks for the user's mark on every call, the hottest route:
// an instance answers from memory for markTTL, as it does for sessions
// (session.cache_ttl). A mark this instance sets or clears is seen at
// once; one set on another instance within markTTL.
const (
	markTTL = time.Second
	// maxMarks bounds the memory: past it the cache starts over.
	maxMarks = 10_000
)

type markEntry struct {
	mark string
	at   time.Time
}

// marks is the per-instance cache of users' marks.
type marks struct {
	mu sync.Mutex
	m  map[string]markEntry
}

func (c *marks) get(userID string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[userID]
	if !ok || now.Sub(e.at) >= markTTL || now.Before(e.at) {
		return "", false
	}
	return e.mark, true
}

func (c *marks) put(userID, mark string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxMarks {
		c.m = map[string]markEntry{}
	}
	c.m[userID] = markEntry{mark: mark, at: now}
}

func (c *marks) forget(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, userID)
}

// SessionError is the mark of one of the user's accounts ("" when none):
// GET /session's `error`. See marks.
func (s *Service) SessionError(ctx context.Context, userID string) (string, error) {
	now := s.cfg.Now()
	if m, ok := s.marks.get(userID, now); ok {
		return m, nil
	}
	m, err := s.store.TokenError(ctx, userID)
	if err != nil {
		return "", err
	}
	s.marks.put(userID, m, now)
	return m, nil
}
