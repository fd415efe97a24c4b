// Package groups is the rules of user groups: a user's groups are the
// ones an admin added (stored: models/groupstore) and those the config's
// groups rules give the domain of the user's verified e-mail address.
// Forward-auth sends them as Remote-Groups and access rules admit by them
// (app/access); the OpenID Provider's groups claim carries them.
//
// Names are 1 to 64 letters, digits, '.', '_', ':' or '-', case-sensitive
// (config.ValidGroupName): no comma, so a comma-separated list of them
// needs no quoting.
package groups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/models/failover"
	"github.com/latchkey-auth/latchkey/models/groupstore"
)

// Store keeps the memberships an admin gave (models/groupstore.Store).
type Store interface {
	// Groups are the user's stored groups, sorted (byte order); nil: none.
	Groups(ctx context.Context, userID string) ([]string, error)
	// Add stores a membership; false when it existed.
	Add(ctx context.Context, userID, name string, now time.Time) (bool, error)
	// Remove deletes one; false when there was none.
	Remove(ctx context.Context, userID, name string) (bool, error)
	// Counts are the stored groups with their numbers of members, sorted.
	Counts(ctx context.Context) ([]groupstore.GroupCount, error)
}

// ErrInvalidName: a group name that is not 1 to 64 letters, digits, '.',
// '_', ':' or '-'.
var ErrInvalidName = errors.New("a group name must be " + config.GroupNameRule)

// cacheSize bounds the cache of stored groups: 8192 users' lists. More
// users than that active within one TTL only cost more queries.
const cacheSize = 8192

// Service answers a user's groups. Build it with New.
type Service struct {
	store    Store
	byDomain map[string][]string // lower-case domain → its rules' groups, sorted, unique
	ttl      time.Duration
	grace    time.Duration              // session.outage_grace: WithOutageGrace
	cache    *lru.Cache[string, cached] // nil: no cache
	// now is the cache's clock: real (monotonic) time, whatever clock the
	// app runs on; the tests of this package set it.
	now func() time.Time
}

// cached is a user's stored groups and when they were read.
type cached struct {
	names []string
	read  time.Time
}

// New returns the service over store with the config's (validated) rules.
// cacheTTL > 0 keeps each user's stored groups that long on this instance
// (forward-auth asks on every request a proxy passes on): a membership
// added or removed elsewhere — on another instance, or by the admin
// command, which is a process of its own — is seen here within cacheTTL.
// 0: every call reads the store.
func New(store Store, rules []config.GroupRule, cacheTTL time.Duration) *Service {
	s := &Service{store: store, byDomain: map[string][]string{}, ttl: cacheTTL, now: time.Now}
	for _, r := range rules {
		for _, d := range r.Domains {
			d = strings.ToLower(strings.TrimPrefix(d, "@"))
			s.byDomain[d] = append(s.byDomain[d], r.Groups...)
		}
	}
	for d, names := range s.byDomain {
		slices.Sort(names)
		s.byDomain[d] = slices.Clip(slices.Compact(names))
	}
	if cacheTTL > 0 {
		// lru.New fails only for a size below 1.
		s.cache, _ = lru.New[string, cached](cacheSize)
	}
	return s
}

// Of is the user's groups: its stored memberships and, when verifiedEmail
// is not nil (the address is verified; nil for none or an unverified
// one), the groups of every rule naming its domain; sorted (byte order),
// each once, nil when none. The slice may be shared: do not modify it.
func (s *Service) Of(ctx context.Context, userID string, verifiedEmail *string) ([]string, error) {
	stored, err := s.stored(ctx, userID)
	if err != nil {
		return nil, err
	}
	return union(stored, s.ruled(verifiedEmail)), nil
}

// OfRead is Of for stored groups just read from the store (with the
// session: app/session's Database.ReadWithGroups), sorted: no query. They
// become this instance's copy, which answers Of within the TTL and, while
// the database is unavailable, within the outage grace.
func (s *Service) OfRead(userID string, verifiedEmail *string, stored []string) []string {
	if s.cache != nil {
		s.cache.Add(userID, cached{names: slices.Clip(stored), read: s.now()})
	}
	return union(stored, s.ruled(verifiedEmail))
}

// Listing is a user's groups by where they come from.
type Listing struct {
	Stored []string // added by an admin, sorted
	Ruled  []string // given by the config's rules for the verified address's domain, sorted
}

// List is the user's groups by source, read from the store (not the
// cache), for the admin command.
func (s *Service) List(ctx context.Context, userID string, verifiedEmail *string) (Listing, error) {
	stored, err := s.store.Groups(ctx, userID)
	if err != nil {
		return Listing{}, err
	}
	return Listing{Stored: stored, Ruled: s.ruled(verifiedEmail)}, nil
}

// Counts are the stored groups with their numbers of members (admin-added
// memberships only: rules' groups are not stored), sorted by name.
func (s *Service) Counts(ctx context.Context) ([]groupstore.GroupCount, error) {
	return s.store.Counts(ctx)
}

// Add puts the user in the group; false when it was in it already.
// ErrInvalidName for a name that could not be one.
func (s *Service) Add(ctx context.Context, userID, name string, now time.Time) (bool, error) {
	if !config.ValidGroupName(name) {
		return false, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	added, err := s.store.Add(ctx, userID, name, now)
	s.forget(userID)
	return added, err
}

// Remove takes the user out of the group; false when it was not in it
// (a group given by a rule cannot be removed: it is not stored).
func (s *Service) Remove(ctx context.Context, userID, name string) (bool, error) {
	if !config.ValidGroupName(name) {
		return false, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	removed, err := s.store.Remove(ctx, userID, name)
	s.forget(userID)
	return removed, err
}

// stored is the user's stored groups, from the cache while its copy is
// younger than the TTL.
func (s *Service) stored(ctx context.Context, userID string) ([]string, error) {
	if s.cache == nil {
		return s.store.Groups(ctx, userID)
	}
	if c, ok := s.cache.Get(userID); ok && s.now().Sub(c.read) < s.ttl {
		return c.names, nil
	}
	read := s.now() // a change made while the query runs is seen within ttl of it
	names, err := s.store.Groups(ctx, userID)
	if err != nil {
		// While no writable database answers, a copy up to the outage
		// grace old still answers forward-auth (as the session's does).
		if c, ok := s.cache.Get(userID); ok && errors.Is(err, failover.ErrUnavailable) && s.now().Sub(c.read) < s.grace {
			return c.names, nil
		}
		return nil, err
	}
	names = slices.Clip(names) // an append by a caller copies, never writes into the cache
	s.cache.Add(userID, cached{names: names, read: read})
	return names, nil
}

// WithOutageGrace lets a cached user's groups answer for up to grace
// while the database is unavailable (session.outage_grace; 0: never).
func (s *Service) WithOutageGrace(grace time.Duration) *Service {
	s.grace = grace
	return s
}

// forget drops this instance's copy of the user's stored groups after a
// change made through this Service.
func (s *Service) forget(userID string) {
	if s.cache != nil {
		s.cache.Remove(userID)
	}
}

// ruled is the groups the rules give a verified address's domain.
func (s *Service) ruled(verifiedEmail *string) []string {
	if verifiedEmail == nil || len(s.byDomain) == 0 {
		return nil
	}
	// The domain in ASCII, as config writes the rules'.
	e, ok := email.Comparable(*verifiedEmail)
	if !ok {
		return nil
	}
	return s.byDomain[e[strings.LastIndexByte(e, '@')+1:]]
}

// union merges two sorted lists of unique names.
func union(a, b []string) []string {
	switch {
	case len(b) == 0:
		return a
	case len(a) == 0:
		return b
	}
	out := make([]string, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch c := strings.Compare(a[0], b[0]); {
		case c < 0:
			out, a = append(out, a[0]), a[1:]
		case c > 0:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}
