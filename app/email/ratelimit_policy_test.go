package email

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mustLimits(t *testing.T, cfg LimitConfig, log *slog.Logger) *Limits {
	t.Helper()
	l, err := NewLimits(cfg, log)
	require.NoError(t, err)
	return l
}

// Issue 9, finding 5: with the table full, a new client is let in (the least
// recently used key is forgotten) while the abuser, still knocking, stays
// refused.
func TestLimitsFullTableLetsNewClientsIn(t *testing.T) {
	l := mustLimits(t, LimitConfig{PerIP: 1, MaxKeys: 3}, nil)
	ok, _ := l.Allow("a@example.com", "192.0.2.66", t0)
	require.True(t, ok)
	for i, ip := range []string{"192.0.2.1", "192.0.2.2"} {
		ok, _ := l.Allow(fmt.Sprintf("u%d@example.com", i), ip, t0.Add(time.Second))
		require.True(t, ok)
	}
	ok, why := l.Allow("a@example.com", "192.0.2.66", t0.Add(time.Minute))
	require.False(t, ok)
	require.Equal(t, "per-IP limit reached for 192.0.2.66", why)
	for i := range 10 { // each new client fills the table again
		ok, why := l.Allow(fmt.Sprintf("n%d@example.com", i), fmt.Sprintf("198.51.100.%d", i), t0.Add(2*time.Minute))
		require.True(t, ok, why)
		ok, _ = l.Allow("a@example.com", "192.0.2.66", t0.Add(2*time.Minute))
		require.False(t, ok, "the recently active abuser stays limited")
	}
}

// Two addresses of one /64 share a bucket; /64s of one /48 share the
// coarser network tier.
func TestLimitsIPv6Prefixes(t *testing.T) {
	l := mustLimits(t, LimitConfig{PerIP: 2, PerNetwork: 3}, nil)
	allow := func(ip string) (bool, string) { return l.Allow("a@example.com", ip, t0) }
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
			ok, why := l.Allow(fmt.Sprintf("u%d@example.com", i), ip, from.Add(time.Duration(i)*time.Millisecond))
			if ok {
				sent++
			} else {
				require.Equal(t, "global limit reached (every address and client)", why)
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
			ok, why := l.Allow(victim, stranger, t0)
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
			ok, why := l.Allow(victim, owner, t0)
			require.True(t, ok, "owner refused after %d e-mails: %s", sent, why)
			sent++
		}
	}
	require.Equal(t, 50, sent, "50 clients send the address no more than the ceiling")
	ok, why := l.Allow(victim, owner, t0)
	require.False(t, ok, "at the ceiling the owner is held off too")
	require.Equal(t, "per-address ceiling reached (all clients)", why)
	ok, _ = l.Allow(victim, owner, t0.Add(time.Hour/50))
	require.True(t, ok, "the ceiling refills one e-mail every window/ceiling")
}

// A refusal by one tier spends nothing in the others: a client refused for
// the address does not lose its per-IP allowance.
func TestLimitsRefusalSpendsNothing(t *testing.T) {
	l := mustLimits(t, LimitConfig{PerAddress: 1, PerIP: 3}, nil)
	ok, _ := l.Allow("a@example.com", "192.0.2.1", t0)
	require.True(t, ok)
	for range 10 {
		ok, _ = l.Allow("a@example.com", "192.0.2.1", t0)
		require.False(t, ok)
	}
	for _, addr := range []string{"b@example.com", "c@example.com"} {
		ok, why := l.Allow(addr, "192.0.2.1", t0)
		require.True(t, ok, why)
	}
	ok, why := l.Allow("d@example.com", "192.0.2.1", t0)
	require.False(t, ok)
	require.Equal(t, "per-IP limit reached for 192.0.2.1", why)
}

func TestLimitsDefaults(t *testing.T) {
	require.Equal(t, LimitConfig{
		PerAddress: 5, PerAddressCeiling: 50, PerIP: 20, PerNetwork: 100, Global: 1000,
		Window: time.Hour, MaxKeys: 100_000,
	}, LimitConfig{}.withDefaults())
	require.Equal(t, LimitConfig{
		PerAddress: 3, PerAddressCeiling: 30, PerIP: 7, PerNetwork: 35, Global: 1000,
		Window: time.Minute, MaxKeys: 100_000,
	}, LimitConfig{PerAddress: 3, PerIP: 7, Window: time.Minute, MaxKeys: -1}.withDefaults())
}

func TestLimitsDisabled(t *testing.T) {
	l := mustLimits(t, LimitConfig{Disabled: true, Global: 1, PerIP: 1}, nil)
	for range 5 {
		ok, _ := l.Allow("a@example.com", "192.0.2.1", t0)
		require.True(t, ok)
	}
}
