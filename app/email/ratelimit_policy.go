package email

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// Defaults of LimitConfig, applied where a field is zero (or negative).
const (
	defaultWindow     = time.Hour
	defaultPerAddress = 5  // per (address, client)
	ceilingFactor     = 10 // per-address ceiling = 10 × per (address, client)
	defaultPerIP      = 20
	networkFactor     = 5 // per IPv6 /48 = 5 × per client
	defaultGlobal     = 1000
)

// LimitConfig is one e-mail provider's sign-in rate-limit policy: how many
// e-mails may be sent per Window. A client is an IPv4 address or an IPv6 /64.
type LimitConfig struct {
	Disabled bool
	// Provider is the provider's id: each provider has its own buckets.
	Provider string
	// PerAddress is per (address, client): requests from other clients
	// cannot use up the owner's own allowance.
	PerAddress int
	// PerAddressCeiling is per address, all clients together: it bounds how
	// many e-mails one inbox can be sent (10 × PerAddress by default).
	PerAddressCeiling int
	PerIP             int
	// PerNetwork is per IPv6 /48 (5 × PerIP by default).
	PerNetwork int
	// Global is per provider: every address, every client.
	Global int
	Window time.Duration
}

func (c LimitConfig) withDefaults() LimitConfig {
	or := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	if c.Window <= 0 {
		c.Window = defaultWindow
	}
	c.PerAddress = or(c.PerAddress, defaultPerAddress)
	c.PerAddressCeiling = or(c.PerAddressCeiling, ceilingFactor*c.PerAddress)
	c.PerIP = or(c.PerIP, defaultPerIP)
	c.PerNetwork = or(c.PerNetwork, networkFactor*c.PerIP)
	c.Global = or(c.Global, defaultGlobal)
	return c
}

// Counter keeps the buckets of every tier: TakeRateLimits spends one event
// from each bucket, all or none, and returns the index of the first bucket
// that had none (-1 when all gave one). *models.Store is the one in use: its
// rows are shared by every instance on the database, so N instances
// together send no more than one instance would.
type Counter interface {
	TakeRateLimits(ctx context.Context, now time.Time, buckets []models.RateBucket) (refused int, err error)
}

// Limits decides whether a sign-in e-mail may be sent, tier by tier: the
// client (IPv4 address or IPv6 /64), its IPv6 /48, the provider's global
// budget, the (address, client) pair, then the address from all clients.
// The counter spends an event in every tier only when all of them allow
// the request, so a refusal spends nothing. Safe for concurrent use.
type Limits struct {
	disabled bool
	provider string
	window   time.Duration
	counter  Counter
	log      *slog.Logger

	perIP, perNetwork, global, perAddress, perCeiling tier
	globalN                                           int

	mu     sync.Mutex
	warned time.Time // last warning about the global budget, by this instance
}

// NewLimits builds the policy over counter; log receives the one warning
// per window when the global budget runs out (nil: no log). counter may be
// nil only when the limits are disabled.
func NewLimits(cfg LimitConfig, counter Counter, log *slog.Logger) (*Limits, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if counter == nil && !cfg.Disabled {
		return nil, errors.New("e-mail rate limits: no counter store")
	}
	cfg = cfg.withDefaults()
	l := &Limits{
		disabled:   cfg.Disabled,
		provider:   cfg.Provider,
		window:     cfg.Window,
		counter:    counter,
		log:        log,
		perIP:      newTier("ip", cfg.PerIP, cfg.Window),
		perNetwork: newTier("net", cfg.PerNetwork, cfg.Window),
		global:     newTier("global", cfg.Global, cfg.Window),
		perAddress: newTier("addr", cfg.PerAddress, cfg.Window),
		perCeiling: newTier("ceiling", cfg.PerAddressCeiling, cfg.Window),
		globalN:    cfg.Global,
	}
	// The counter keeps time in microseconds: a tier refilling faster
	// than one event a microsecond is a misconfiguration, not a limit.
	for _, t := range []tier{l.perIP, l.perNetwork, l.global, l.perAddress, l.perCeiling} {
		if t.interval < time.Microsecond {
			return nil, fmt.Errorf("e-mail rate limits: %d e-mails per %v is more than one a microsecond", t.burst, cfg.Window)
		}
	}
	return l, nil
}

// Allow reports whether an e-mail to addr (normalised) may be sent at the
// request of the client at clientIP, and counts it if so. The reason names
// the limit that refused and is meant for the log: it holds the client's
// IP or prefix but never the address. err is a counter that could not be
// asked (the database): the caller refuses, as a limit it cannot check
// must not let the request through.
func (l *Limits) Allow(ctx context.Context, addr, clientIP string, now time.Time) (ok bool, reason string, err error) {
	if l.disabled {
		return true, "", nil
	}
	client := clientKey(clientIP)
	// The tiers in one fixed order, which is also the order in which the
	// counter locks their rows (so two requests cannot deadlock) and the
	// order that decides which tier a request over several is refused by.
	buckets := []models.RateBucket{l.perIP.bucket(l.provider, client)}
	reasons := []string{"per-IP limit reached for " + client}
	if key, ok := networkKey(clientIP); ok {
		buckets = append(buckets, l.perNetwork.bucket(l.provider, key))
		reasons = append(reasons, "per-network limit reached for "+key)
	}
	globalAt := len(buckets)
	buckets = append(buckets,
		l.global.bucket(l.provider),
		l.perAddress.bucket(l.provider, addr, client),
		l.perCeiling.bucket(l.provider, addr))
	reasons = append(reasons,
		"global limit reached (every address and client)",
		"per-address limit reached from "+client,
		"per-address ceiling reached (all clients)")

	refused, err := l.counter.TakeRateLimits(ctx, now, buckets)
	switch {
	case err != nil:
		return false, "", fmt.Errorf("e-mail rate limits: %w", err)
	case refused < 0:
		return true, "", nil
	case refused >= len(buckets): // a broken counter must not panic a request, nor pass it
		return false, "", fmt.Errorf("e-mail rate limits: the counter refused bucket %d of %d", refused, len(buckets))
	case refused == globalAt:
		l.warnGlobal(now)
	}
	return false, reasons[refused], nil
}

// warnGlobal logs that the global budget is spent, once per window: every
// refusal after it is the same news. Each instance keeps its own note, so
// N instances log it up to N times a window.
func (l *Limits) warnGlobal(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.warned.IsZero() && now.Sub(l.warned) < l.window {
		return
	}
	l.warned = now
	l.log.Warn("sign-in e-mail budget exhausted: every e-mail sign-in is refused until it refills",
		"limit", l.globalN, "window", l.window)
}
