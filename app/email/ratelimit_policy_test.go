package email

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

// store is a fresh SQLite database with the schema: the counter store
// latchkey gives the limits (app/emailflow/setup.go).
func store(t *testing.T) *models.Store {
	t.Helper()
	return storeAt(t, filepath.Join(t.TempDir(), "latchkey.db"))
}

func storeAt(t *testing.T, path string) *models.Store {
	t.Helper()
	s, err := models.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func mustLimits(t *testing.T, cfg LimitConfig, log *slog.Logger) *Limits {
	t.Helper()
	return limitsOn(t, store(t), cfg, log)
}

func limitsOn(t *testing.T, s *models.Store, cfg LimitConfig, log *slog.Logger) *Limits {
	t.Helper()
	if cfg.Provider == "" {
		cfg.Provider = "email"
	}
	l, err := NewLimits(cfg, s, log)
	require.NoError(t, err)
	return l
}

// allow is Allow with a counter that must answer.
func (l *Limits) allow(t *testing.T, addr, clientIP string, now time.Time) (bool, string) {
	t.Helper()
	ok, why, err := l.Allow(context.Background(), Request{Addr: addr, ClientIP: clientIP}, now)
	require.NoError(t, err)
	return ok, why
}

// allowOwner is allow for an e-mail to a user's verified address.
func (l *Limits) allowOwner(t *testing.T, addr, clientIP string, now time.Time) (bool, string) {
	t.Helper()
	ok, why, err := l.Allow(context.Background(), Request{Addr: addr, ClientIP: clientIP, Owner: true}, now)
	require.NoError(t, err)
	return ok, why
}

func rows(t *testing.T, s *models.Store) int64 {
	t.Helper()
	c, err := s.Count(context.Background())
	require.NoError(t, err)
	return c.RateLimits
}

// The counters are rows in the database, written only for e-mails sent (a
// row per tier, the global one shared), so an abuser knocking on adds none
// and the table is bounded by the sends, not by the requests. (Formerly an
// in-memory table of a fixed size: when full, it forgot the least recently
// used key so as not to refuse newcomers; there is no such table now.) A
// new client gets in; the abuser stays refused; a window later the purge
// empties the table.
func TestLimitsRowsOnlyForSends(t *testing.T) {
	s := store(t)
	l := limitsOn(t, s, LimitConfig{PerIP: 1}, nil)
	ok, _ := l.allow(t, "a@example.com", "192.0.2.66", t0)
	require.True(t, ok)
	require.EqualValues(t, 5, rows(t, s), "per IP, per /24, global, per (address, client), per address")
	for i := range 20 {
		ok, why := l.allow(t, "a@example.com", "192.0.2.66", t0.Add(time.Minute))
		require.False(t, ok)
		require.Equal(t, "per-IP limit reached for 192.0.2.66", why)
		ok, _ = l.allow(t, fmt.Sprintf("r%d@example.com", i), "192.0.2.66", t0.Add(time.Minute))
		require.False(t, ok)
	}
	require.EqualValues(t, 5, rows(t, s), "refusals write nothing")
	for i := range 10 {
		ok, why := l.allow(t, fmt.Sprintf("n%d@example.com", i), fmt.Sprintf("198.51.%d.1", i), t0.Add(2*time.Minute))
		require.True(t, ok, why)
		ok, _ = l.allow(t, "a@example.com", "192.0.2.66", t0.Add(2*time.Minute))
		require.False(t, ok, "the abuser stays limited")
	}
	require.EqualValues(t, 5+4*10, rows(t, s), "4 rows a client: per IP, per /24, address and client, address")
	_, err := s.PurgeExpired(context.Background(), t0.Add(2*time.Hour))
	require.NoError(t, err)
	require.Zero(t, rows(t, s), "every bucket is full again a window later")
}

// The table holds no address and no client IP: bucket names are hashed.
func TestLimitsStoreNoAddress(t *testing.T) {
	s := store(t)
	l := limitsOn(t, s, LimitConfig{}, nil)
	for _, ip := range []string{"192.0.2.7", "2001:db8:1:2::1"} {
		ok, _ := l.allow(t, "alice@example.com", ip, t0)
		require.True(t, ok)
	}
	all, err := s.RateLimits(context.Background())
	require.NoError(t, err)
	require.Len(t, all, 8, "global, address, 2 × (client, network, address and client)")
	for _, r := range all {
		for _, personal := range []string{"alice", "example.com", "192.0.2", "2001:db8"} {
			require.NotContains(t, r.Bucket, personal)
		}
		require.Regexp(t, `^email:(ip|net|net4|global|addr|ceiling)(:[0-9a-f]{64})?$`, r.Bucket)
	}
}

// Two instances (two handles on one database) share the limits: together
// they send an address no more than its allowance. Two providers on one
// database do not share theirs.
func TestLimitsShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "latchkey.db")
	a := limitsOn(t, storeAt(t, path), LimitConfig{PerAddress: 2}, nil)
	b := limitsOn(t, storeAt(t, path), LimitConfig{PerAddress: 2}, nil)
	sent := 0
	for i := range 6 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if ok, _ := l.allow(t, "alice@example.com", "192.0.2.1", t0); ok {
			sent++
		}
	}
	require.Equal(t, 2, sent)

	s := store(t)
	one := limitsOn(t, s, LimitConfig{Provider: "one", Global: 1}, nil)
	two := limitsOn(t, s, LimitConfig{Provider: "two", Global: 1}, nil)
	for _, l := range []*Limits{one, two} {
		ok, why := l.allow(t, "u@example.com", "192.0.2.1", t0)
		require.True(t, ok, why)
		ok, why = l.allow(t, "v@example.com", "192.0.2.2", t0)
		require.False(t, ok)
		require.Equal(t, "global limit reached (addresses without a verified account)", why)
	}
}

// A counter that cannot be asked refuses (with the error), never lets the
// request through unchecked; the error is marked as an outage, which the
// web kit answers "try again" (503), not as a refusal of the address.
func TestLimitsStoreUnavailable(t *testing.T) {
	s := store(t)
	l := limitsOn(t, s, LimitConfig{}, nil)
	require.NoError(t, s.Close())
	ok, why, err := l.Allow(context.Background(), Request{Addr: "a@example.com", ClientIP: "192.0.2.1"}, t0)
	require.False(t, ok)
	require.Empty(t, why)
	require.ErrorContains(t, err, "e-mail rate limits")
	var outage interface{ Unavailable() bool }
	require.ErrorAs(t, err, &outage)
	require.True(t, outage.Unavailable())
}

func TestNewLimitsErrors(t *testing.T) {
	_, err := NewLimits(LimitConfig{}, nil, nil)
	require.ErrorContains(t, err, "no counter store")
	_, err = NewLimits(LimitConfig{Window: time.Microsecond, Global: 2}, store(t), nil)
	require.ErrorContains(t, err, "more than one a microsecond")
}

// Two addresses of one /64 share a bucket; /64s of one /48 share the
// coarser network tier.
func TestLimitsIPv6Prefixes(t *testing.T) {
	l := mustLimits(t, LimitConfig{PerIP: 2, PerNetwork: 3}, nil)
	allow := func(ip string) (bool, string) { return l.allow(t, "a@example.com", ip, t0) }
	ok, _ := allow("2001:db8:1:1::a")
	require.True(t, ok)
	ok, _ = allow("2001:db8:1:1:ffff:ffff:ffff:ffff")
	require.True(t, ok)
	ok, why := allow("2001:db8:1:1::b")
	require.False(t, ok)
	require.Equal(t, "per-IP limit reached for 2001:db8:1:1::/64", why)

	ok, _ = allow("2001:db8:1:2::1")
	require.True(t, ok)
	ok, why = allow("2001:db8:1:3::1")
	require.False(t, ok)
	require.Equal(t, "per-network limit reached for 2001:db8:1::/48", why)
	ok, _ = allow("2001:db8:2::1")
	require.True(t, ok, "another /48")
}

// The global budget refuses after Global sends across many clients and
// addresses, and says so in the log once per window, not per request.
func TestLimitsGlobalBudgetLogsOnce(t *testing.T) {
	var logs bytes.Buffer
	l := mustLimits(t, LimitConfig{Global: 10, Window: time.Hour}, slog.New(slog.NewTextHandler(&logs, nil)))
	run := func(from time.Time, n int) (sent int) {
		for i := range n {
			ip := fmt.Sprintf("2001:db8:%x::1", i) // a /48 each
			ok, why := l.allow(t, fmt.Sprintf("u%d@example.com", i), ip, from.Add(time.Duration(i)*time.Millisecond))
			if ok {
				sent++
			} else {
				require.Equal(t, "global limit reached (addresses without a verified account)", why)
			}
		}
		return sent
	}
	require.Equal(t, 10, run(t0, 100))
	require.Equal(t, 1, strings.Count(logs.String(), "budget exhausted"), logs.String())
	require.Contains(t, logs.String(), "level=WARN")

	require.Equal(t, 0, run(t0.Add(time.Minute), 50), "within the window: still spent, no new warning")
	require.Equal(t, 1, strings.Count(logs.String(), "budget exhausted"))

	require.Equal(t, 10, run(t0.Add(2*time.Hour), 100), "a window later: full again")
	require.Equal(t, 2, strings.Count(logs.String(), "budget exhausted"), "one warning per window")
}

// A stranger with 50 clients cannot get the owner's own client refused: each
// stranger client has its own per-address allowance, and the owner keeps
// hers, up to the ceiling. The ceiling is the trade-off: it bounds what one
// inbox can be sent (without it, 50 clients × PerAddress e-mails), at the
// price that a stranger with Ceiling/PerAddress clients can still hold the
// owner off, for window/Ceiling per e-mail, until it refills.
func TestLimitsStrangerCannotLockOutOwner(t *testing.T) {
	l := mustLimits(t, LimitConfig{PerAddress: 5, PerAddressCeiling: 50}, nil)
	const victim, owner = "alice@example.com", "192.0.2.10"
	sent := 0
	for i := range 50 {
		stranger := fmt.Sprintf("198.51.100.%d", i)
		for range 6 {
			ok, why := l.allow(t, victim, stranger, t0)
			if ok {
				sent++
				continue
			}
			require.NotContains(t, why, victim, "reasons are logged; they never hold the address")
			if sent < 50 {
				require.Equal(t, "per-address limit reached from "+stranger, why)
			} else {
				require.Equal(t, "per-address ceiling reached (all clients)", why)
			}
		}
		if i == 0 || i == 8 { // after 5 and after 46 e-mails to her address
			ok, why := l.allow(t, victim, owner, t0)
			require.True(t, ok, "owner refused after %d e-mails: %s", sent, why)
			sent++
		}
	}
	require.Equal(t, 50, sent, "50 clients send the address no more than the ceiling")
	ok, why := l.allow(t, victim, owner, t0)
	require.False(t, ok, "at the ceiling the owner is held off too")
	require.Equal(t, "per-address ceiling reached (all clients)", why)
	ok, _ = l.allow(t, victim, owner, t0.Add(time.Hour/50))
	require.True(t, ok, "the ceiling refills one e-mail every window/ceiling")
}

// A refusal by one tier spends nothing in the others: a client refused for
// the address does not lose its per-IP allowance.
func TestLimitsRefusalSpendsNothing(t *testing.T) {
	l := mustLimits(t, LimitConfig{PerAddress: 1, PerIP: 3}, nil)
	ok, _ := l.allow(t, "a@example.com", "192.0.2.1", t0)
	require.True(t, ok)
	for range 10 {
		ok, _ = l.allow(t, "a@example.com", "192.0.2.1", t0)
		require.False(t, ok)
	}
	for _, addr := range []string{"b@example.com", "c@example.com"} {
		ok, why := l.allow(t, addr, "192.0.2.1", t0)
		require.True(t, ok, why)
	}
	ok, why := l.allow(t, "d@example.com", "192.0.2.1", t0)
	require.False(t, ok)
	require.Equal(t, "per-IP limit reached for 192.0.2.1", why)
}

func TestLimitsDefaults(t *testing.T) {
	require.Equal(t, LimitConfig{
		PerAddress: 5, PerAddressCeiling: 50, PerIP: 20, PerNetwork: 100, PerIPv4Network: 100, Global: 1000,
		Window: time.Hour,
	}, LimitConfig{}.withDefaults())
	require.Equal(t, LimitConfig{
		PerAddress: 3, PerAddressCeiling: 30, PerIP: 7, PerNetwork: 35, PerIPv4Network: 35, Global: 1000,
		Window: time.Minute,
	}, LimitConfig{PerAddress: 3, PerIP: 7, Window: time.Minute, Global: -1}.withDefaults())
}

// Disabled limits need no counter and allow everything.
func TestLimitsDisabled(t *testing.T) {
	l, err := NewLimits(LimitConfig{Disabled: true, Global: 1, PerIP: 1}, nil, nil)
	require.NoError(t, err)
	for range 5 {
		ok, _ := l.allow(t, "a@example.com", "192.0.2.1", t0)
		require.True(t, ok)
	}
}

// Issue 26, M4: the global budget spent by strangers' requests for unknown
// addresses refuses no owner: mail to a user's verified address neither
// counts against it nor is refused by it, and is counted by every other
// tier. Each refusal is reported with its tier.
func TestLimitsGlobalBudgetSparesOwners(t *testing.T) {
	var refused []string
	l := mustLimits(t, LimitConfig{Global: 3, PerAddress: 2, Refused: func(tier string) { refused = append(refused, tier) }}, nil)
	for i := range 3 {
		ok, why := l.allowOwner(t, "alice@example.com", fmt.Sprintf("198.51.%d.1", i), t0)
		require.True(t, ok, why)
	}
	for i := range 3 {
		ok, why := l.allow(t, fmt.Sprintf("u%d@example.com", i), fmt.Sprintf("203.0.%d.1", i), t0)
		require.True(t, ok, "owners' mail did not spend the budget: %s", why)
	}
	ok, why := l.allow(t, "newcomer@example.com", "192.0.2.1", t0)
	require.False(t, ok)
	require.Equal(t, "global limit reached (addresses without a verified account)", why)
	ok, why = l.allowOwner(t, "bob@example.com", "192.0.2.1", t0)
	require.True(t, ok, why)
	ok, _ = l.allowOwner(t, "bob@example.com", "192.0.2.1", t0)
	require.True(t, ok)
	ok, why = l.allowOwner(t, "bob@example.com", "192.0.2.1", t0)
	require.False(t, ok, "the other tiers still apply to owners")
	require.Equal(t, "per-address limit reached from 192.0.2.1", why)
	require.Equal(t, []string{"global", "addr"}, refused)
}

// Issue 26, M4: IPv4 addresses of one /24 share a network tier of its own
// allowance (PerIPv4Network), as IPv6 /64s share their /48's (PerNetwork).
func TestLimitsIPv4Network(t *testing.T) {
	l := mustLimits(t, LimitConfig{PerIP: 2, PerIPv4Network: 3, PerNetwork: 100}, nil)
	for i := range 3 {
		ok, why := l.allow(t, "a@example.com", fmt.Sprintf("192.0.2.%d", i+1), t0)
		require.True(t, ok, why)
	}
	ok, why := l.allow(t, "a@example.com", "192.0.2.99", t0)
	require.False(t, ok)
	require.Equal(t, "per-network limit reached for 192.0.2.0/24", why)
	ok, why = l.allow(t, "a@example.com", "192.0.3.1", t0)
	require.True(t, ok, "another /24: %s", why)
}
