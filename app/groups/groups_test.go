package groups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models/failover"
	"github.com/latchkey-auth/latchkey/models/groupstore"
)

// fakeStore keeps memberships in memory and counts the lookups.
type fakeStore struct {
	mu      sync.Mutex
	members map[string][]string // user → sorted names
	lookups int
	fail    error
}

func newFake() *fakeStore { return &fakeStore{members: map[string][]string{}} }

func (f *fakeStore) Groups(_ context.Context, userID string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.fail != nil {
		return nil, f.fail
	}
	return slices.Clone(f.members[userID]), nil
}

func (f *fakeStore) Add(_ context.Context, userID, name string, _ time.Time) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.Contains(f.members[userID], name) {
		return false, nil
	}
	f.members[userID] = append(f.members[userID], name)
	slices.Sort(f.members[userID])
	return true, nil
}

func (f *fakeStore) Remove(_ context.Context, userID, name string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.members[userID], name)
	if i < 0 {
		return false, nil
	}
	f.members[userID] = slices.Delete(f.members[userID], i, i+1)
	return true, nil
}

func (f *fakeStore) Counts(context.Context) ([]groupstore.GroupCount, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := map[string]int64{}
	for _, names := range f.members {
		for _, g := range names {
			n[g]++
		}
	}
	var out []groupstore.GroupCount
	for g, c := range n {
		out = append(out, groupstore.GroupCount{Name: g, Members: c})
	}
	slices.SortFunc(out, func(a, b groupstore.GroupCount) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (f *fakeStore) calls() int { f.mu.Lock(); defer f.mu.Unlock(); return f.lookups }

func str(s string) *string { return &s }

var rules = []config.GroupRule{
	{Domains: []string{"Example.com", "@example.org"}, Groups: []string{"staff", "everyone"}},
	{Domains: []string{"example.com"}, Groups: []string{"everyone", "dev"}},
}

// Of is the stored groups ∪ the rules' groups of the verified address's
// domain, sorted and unique; an unverified address (nil) gets none of the
// rules'; domains match exactly, in any case.
func TestOf(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	s := New(f, rules, 0)
	_, err := s.Add(ctx, "u1", "admins", time.Now())
	require.NoError(t, err)
	_, err = s.Add(ctx, "u1", "staff", time.Now())
	require.NoError(t, err)
	_, err = s.Add(ctx, "u1", "Zeta", time.Now())
	require.NoError(t, err)

	for _, tc := range []struct {
		user  string
		email *string
		want  []string
	}{
		{"u1", nil, []string{"Zeta", "admins", "staff"}},
		{"u1", str("ann@example.com"), []string{"Zeta", "admins", "dev", "everyone", "staff"}},
		{"u1", str("ann@EXAMPLE.COM"), []string{"Zeta", "admins", "dev", "everyone", "staff"}},
		{"u1", str("ann@example.org"), []string{"Zeta", "admins", "everyone", "staff"}},
		{"u1", str("ann@sub.example.com"), []string{"Zeta", "admins", "staff"}},
		{"u1", str("ann@example.com.evil.net"), []string{"Zeta", "admins", "staff"}},
		{"u2", nil, nil},
		{"u2", str("bob@example.com"), []string{"dev", "everyone", "staff"}},
		{"u2", str("no-at-sign"), nil},
	} {
		got, err := s.Of(ctx, tc.user, tc.email)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s %v", tc.user, tc.email)
	}

	l, err := s.List(ctx, "u1", str("ann@example.org"))
	require.NoError(t, err)
	require.Equal(t, Listing{Stored: []string{"Zeta", "admins", "staff"}, Ruled: []string{"everyone", "staff"}}, l)

	f.fail = errors.New("database down")
	_, err = s.Of(ctx, "u1", nil)
	require.ErrorIs(t, err, f.fail, "a failed lookup is an error, never no groups")
}

// Add and Remove refuse a name that is not a group's, touching nothing.
func TestAddRemove(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	s := New(f, nil, 0)
	for _, bad := range []string{"", "a,b", "a b", "é"} {
		_, err := s.Add(ctx, "u1", bad, time.Now())
		require.ErrorIs(t, err, ErrInvalidName, bad)
		_, err = s.Remove(ctx, "u1", bad)
		require.ErrorIs(t, err, ErrInvalidName, bad)
	}
	require.Empty(t, f.members)
	added, err := s.Add(ctx, "u1", "ops", time.Now())
	require.NoError(t, err)
	require.True(t, added)
	added, err = s.Add(ctx, "u1", "ops", time.Now())
	require.NoError(t, err)
	require.False(t, added)
	removed, err := s.Remove(ctx, "u1", "ops")
	require.NoError(t, err)
	require.True(t, removed)
	removed, err = s.Remove(ctx, "u1", "ops")
	require.NoError(t, err)
	require.False(t, removed)
}

// With a TTL, a user's stored groups are read once per TTL; a change
// through this Service is seen at once, one made elsewhere (straight in
// the store, as another instance or the admin command does) within the
// TTL. A failed read is not kept.
func TestCache(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	s := New(f, rules, 5*time.Second)
	clock := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return clock }

	for range 3 {
		got, err := s.Of(ctx, "u1", str("ann@example.org"))
		require.NoError(t, err)
		require.Equal(t, []string{"everyone", "staff"}, got)
	}
	require.Equal(t, 1, f.calls())

	_, _ = f.Add(ctx, "u1", "ops", clock) // elsewhere
	got, err := s.Of(ctx, "u1", nil)
	require.NoError(t, err)
	require.Empty(t, got, "the copy is younger than the TTL")
	clock = clock.Add(5 * time.Second)
	got, err = s.Of(ctx, "u1", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"ops"}, got, "read again once the TTL is up")
	require.Equal(t, 2, f.calls())

	_, err = s.Add(ctx, "u1", "admins", clock) // here
	require.NoError(t, err)
	got, err = s.Of(ctx, "u1", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"admins", "ops"}, got, "a change through the Service is seen at once")
	_, err = s.Remove(ctx, "u1", "ops")
	require.NoError(t, err)
	got, err = s.Of(ctx, "u1", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"admins"}, got)

	// Appending to an answer never writes into the cached copy.
	got, err = s.Of(ctx, "u1", nil)
	require.NoError(t, err)
	_ = append(got, "injected")
	again, err := s.Of(ctx, "u1", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"admins"}, again)

	f.fail = errors.New("database down")
	_, err = s.Of(ctx, "u2", nil)
	require.ErrorIs(t, err, f.fail)
	f.fail = nil
	before := f.calls()
	_, err = s.Of(ctx, "u2", nil)
	require.NoError(t, err)
	require.Equal(t, before+1, f.calls(), "a failure is not cached")
}

// Stored groups read with the session (OfRead) answer with the rules'
// groups added, cost no query, and become the copy that Of answers from
// within the TTL and, while the database is unavailable, within the
// outage grace; an answer never writes into that copy.
func TestOfRead(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	s := New(f, rules, 5*time.Second).WithOutageGrace(time.Minute)
	clock := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return clock }

	got := s.OfRead("u1", str("ann@example.org"), []string{"ops"})
	require.Equal(t, []string{"everyone", "ops", "staff"}, got)
	got = s.OfRead("u2", nil, nil)
	require.Empty(t, got)
	require.Equal(t, 0, f.calls(), "no query")

	got, err := s.Of(ctx, "u1", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"ops"}, got, "the copy answers within the TTL")
	_ = append(got, "injected")
	require.Equal(t, 0, f.calls())

	clock = clock.Add(30 * time.Second)
	f.fail = fmt.Errorf("lookup: %w", failover.ErrUnavailable)
	got, err = s.Of(ctx, "u1", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"ops"}, got, "past the TTL, the database unavailable: the copy, within the grace")
	clock = clock.Add(time.Minute)
	_, err = s.Of(ctx, "u1", nil)
	require.ErrorIs(t, err, failover.ErrUnavailable, "past the grace")
}

// Rules compile to one sorted, unique list per domain, whatever their
// order and overlaps.
func TestRulesCompile(t *testing.T) {
	s := New(newFake(), []config.GroupRule{
		{Domains: []string{"a.example"}, Groups: []string{"z", "a", "z"}},
		{Domains: []string{"A.example", "b.example"}, Groups: []string{"m", "a"}},
	}, 0)
	require.Equal(t, []string{"a", "m", "z"}, s.ruled(str("x@a.example")))
	require.Equal(t, []string{"a", "m"}, s.ruled(str("x@b.example")))
	require.Nil(t, s.ruled(str("x@c.example")))

	// A rule's domain is in ASCII (config writes it so); an address's is
	// compared in ASCII too.
	s = New(newFake(), []config.GroupRule{{Domains: []string{"xn--bcher-kva.example"}, Groups: []string{"readers"}}}, 0)
	require.Equal(t, []string{"readers"}, s.ruled(str("x@Bücher.example")))
	require.Equal(t, []string{"readers"}, s.ruled(str("x@xn--bcher-kva.example")))
	require.Nil(t, s.ruled(str("x@bucher.example")))
}
