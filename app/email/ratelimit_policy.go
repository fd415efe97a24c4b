package email

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of LimitConfig, applied where a field is zero (or negative).
const (
	defaultWindow     = time.Hour
	defaultPerAddress = 5  // per (address, client)
	ceilingFactor     = 10 // per-address ceiling = 10 × per (address, client)
	defaultPerIP      = 20
	networkFactor     = 5 // per IPv6 /48 = 5 × per client
	defaultGlobal     = 1000
	defaultMaxKeys    = 100_000 // per table; about 250 bytes a key
)

// LimitConfig is one e-mail provider's sign-in rate-limit policy: how many
// e-mails may be sent per Window. A client is an IPv4 address or an IPv6 /64.
type LimitConfig struct {
	Disabled bool
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
	// MaxKeys bounds each table; the least recently used key goes first.
	MaxKeys int
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
	c.MaxKeys = or(c.MaxKeys, defaultMaxKeys)
	return c
}

// Limits decides whether a sign-in e-mail may be sent, tier by tier: the
// client (IPv4 address or IPv6 /64), its IPv6 /48, the provider's global
// budget, the (address, client) pair, then the address from all clients.
// A request is counted against every tier only when all of them allow it,
// so a refusal spends nothing. Safe for concurrent use.
type Limits struct {
	disabled bool
	window   time.Duration
	log      *slog.Logger

	mu                                        sync.Mutex
	perIP, perNetwork, perAddress, perCeiling *tier
	global                                    *rate.Limiter
	globalN                                   int
	warned                                    time.Time // last warning about the global budget
}

// NewLimits builds the policy; log receives the one warning per window
// when the global budget runs out (nil: no log).
func NewLimits(cfg LimitConfig, log *slog.Logger) (*Limits, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	l := &Limits{
		disabled: cfg.Disabled,
		window:   cfg.Window,
		log:      log,
		global:   rate.NewLimiter(rate.Every(cfg.Window/time.Duration(cfg.Global)), cfg.Global),
		globalN:  cfg.Global,
	}
	var err error
	for _, t := range []struct {
		dst *(*tier)
		n   int
	}{
		{&l.perIP, cfg.PerIP}, {&l.perNetwork, cfg.PerNetwork},
		{&l.perAddress, cfg.PerAddress}, {&l.perCeiling, cfg.PerAddressCeiling},
	} {
		if *t.dst, err = newTier(t.n, cfg.Window, cfg.MaxKeys); err != nil {
			return nil, fmt.Errorf("e-mail rate limits: %w", err)
		}
	}
	return l, nil
}

// Allow reports whether an e-mail to addr (normalised) may be sent at the
// request of the client at clientIP, and counts it if so. The reason names
// the limit that refused and is meant for the log: it holds the client's
// IP or prefix but never the address.
func (l *Limits) Allow(addr, clientIP string, now time.Time) (ok bool, reason string) {
	if l.disabled {
		return true, ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()

	client := clientKey(clientIP)
	ip := l.perIP.get(client, now)
	if !ip.has(now) {
		return false, "per-IP limit reached for " + client
	}
	var network *bucket
	if key, ok := networkKey(clientIP); ok {
		if network = l.perNetwork.get(key, now); !network.has(now) {
			return false, "per-network limit reached for " + key
		}
	}
	if l.global.TokensAt(now) < 1 {
		l.warnGlobal(now)
		return false, "global limit reached (every address and client)"
	}
	// Address buckets are made only past the global budget, so their
	// number grows no faster than e-mails are sent.
	pair := l.perAddress.get(addr+" "+client, now)
	if !pair.has(now) {
		return false, "per-address limit reached from " + client
	}
	ceiling := l.perCeiling.get(addr, now)
	if !ceiling.has(now) {
		return false, "per-address ceiling reached (all clients)"
	}

	for _, b := range []*bucket{ip, network, pair, ceiling} {
		if b != nil {
			b.lim.AllowN(now, 1)
		}
	}
	l.global.AllowN(now, 1)
	return true, ""
}

// warnGlobal logs that the global budget is spent, once per window: every
// refusal after it is the same news.
func (l *Limits) warnGlobal(now time.Time) {
	if !l.warned.IsZero() && now.Sub(l.warned) < l.window {
		return
	}
	l.warned = now
	l.log.Warn("sign-in e-mail budget exhausted: every e-mail sign-in is refused until it refills",
		"limit", l.globalN, "window", l.window)
}
