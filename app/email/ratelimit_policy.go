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
	networkFactor     = 5 // per IPv6 /48, per IPv4 /24 = 5 × per client
	defaultGlobal     = 1000
)

// LimitConfig is one e-mail provider's sign-in rate-limit policy: how many
// e-mails may be sent per Window. A client is an IPv4 address or an IPv6 /64.
// Zero (or negative) values take the defaults.
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
	// PerIPv4Network is per IPv4 /24 (5 × PerIP by default).
	PerIPv4Network int
	// Global is per provider: every address without a verified account,
	// every client (see Request.Owner).
	Global int
	Window time.Duration
	// Refused, when set, is told the tier of every refusal, by the name
	// its buckets have in the counter store: ip (the client), net (its
	// IPv6 /48), net4 (its IPv4 /24), global, addr (the address from the
	// client), ceiling (the address from all clients). The service counts
	// them in a metric.
	Refused func(tier string)
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
	c.PerIPv4Network = or(c.PerIPv4Network, networkFactor*c.PerIP)
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
// client (IPv4 address or IPv6 /64), its IPv6 /48 or IPv4 /24, the
// provider's global budget (not for an owner's mail: Request.Owner), the
// (address, client) pair, then the address from all clients. The counter
// spends an event in every tier only when all of them allow the request,
// so a refusal spends nothing. Safe for concurrent use.
type Limits struct {
	disabled bool
	provider string
	window   time.Duration
	counter  Counter
	log      *slog.Logger
	refused  func(tier string)

	perIP, perNetwork, perNetwork4, global, perAddress, perCeiling tier
	globalN                                                        int

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
		disabled:    cfg.Disabled,
		provider:    cfg.Provider,
		window:      cfg.Window,
		counter:     counter,
		log:         log,
		refused:     cfg.Refused,
		perIP:       newTier("ip", cfg.PerIP, cfg.Window),
		perNetwork:  newTier("net", cfg.PerNetwork, cfg.Window),
		perNetwork4: newTier("net4", cfg.PerIPv4Network, cfg.Window),
		global:      newTier("global", cfg.Global, cfg.Window),
		perAddress:  newTier("addr", cfg.PerAddress, cfg.Window),
		perCeiling:  newTier("ceiling", cfg.PerAddressCeiling, cfg.Window),
		globalN:     cfg.Global,
	}
	if l.refused == nil {
		l.refused = func(string) {}
	}
	// The counter keeps time in microseconds: a tier refilling faster
	// than one event a microsecond is a misconfiguration, not a limit.
	for _, t := range []tier{l.perIP, l.perNetwork, l.perNetwork4, l.global, l.perAddress, l.perCeiling} {
		if t.interval < time.Microsecond {
			return nil, fmt.Errorf("e-mail rate limits: %d e-mails per %v is more than one a microsecond", t.burst, cfg.Window)
		}
	}
	return l, nil
}

// Request is one e-mail the limits are asked about.
type Request struct {
	Addr     string // the recipient, normalised
	ClientIP string // the client asking: "host:port" or a bare IP
	// Owner: Addr is the verified address of an existing user, and the
	// e-mail signs them in or lets them reset their password. The global
	// budget neither refuses nor counts it: strangers can spend that budget
	// with requests for unknown addresses, and must not be able to stop
	// owners from signing in or recovering their accounts. Every other
	// tier applies.
	Owner bool
}

// Allow reports whether the e-mail r may be sent, and counts it if so.
// The reason names the limit that refused and is meant for the log: it
// holds the client's IP or prefix but never the address. err is a counter
// that could not be asked (the database; a CounterDown): the caller
// refuses, as a limit it cannot check must not let the request through.
func (l *Limits) Allow(ctx context.Context, r Request, now time.Time) (ok bool, reason string, err error) {
	if l.disabled {
		return true, "", nil
	}
	client := clientKey(r.ClientIP)
	// The tiers in one fixed order, which is also the order in which the
	// counter locks their rows (so two requests cannot deadlock) and the
	// order that decides which tier a request over several is refused by.
	// A client is IPv4 or IPv6, so one network tier at most applies.
	buckets := []models.RateBucket{l.perIP.bucket(l.provider, client)}
	tiers := []tier{l.perIP}
	reasons := []string{"per-IP limit reached for " + client}
	if key, ipv6, ok := NetworkKey(r.ClientIP); ok {
		network := l.perNetwork4
		if ipv6 {
			network = l.perNetwork
		}
		buckets = append(buckets, network.bucket(l.provider, key))
		tiers = append(tiers, network)
		reasons = append(reasons, "per-network limit reached for "+key)
	}
	if !r.Owner {
		buckets = append(buckets, l.global.bucket(l.provider))
		tiers = append(tiers, l.global)
		reasons = append(reasons, "global limit reached (addresses without a verified account)")
	}
	buckets = append(buckets,
		l.perAddress.bucket(l.provider, r.Addr, client),
		l.perCeiling.bucket(l.provider, r.Addr))
	tiers = append(tiers, l.perAddress, l.perCeiling)
	reasons = append(reasons,
		"per-address limit reached from "+client,
		"per-address ceiling reached (all clients)")

	refused, err := take(ctx, "e-mail rate limits", l.counter, now, buckets)
	switch {
	case err != nil:
		return false, "", err
	case refused < 0:
		return true, "", nil
	}
	l.refused(tiers[refused].name)
	if tiers[refused].name == l.global.name {
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
	l.log.Warn("sign-in e-mail budget exhausted: e-mails to addresses without a verified account are refused until it refills;"+
		" existing users still get their sign-in and reset e-mails (see latchkey_ratelimit_refusals_total{tier=\"global\"})",
		"limit", l.globalN, "window", l.window)
}

// take spends one event from every bucket (Counter): the index of the
// bucket that had none, -1 when all gave one; what names the limits in an
// error (the e-mail limits, or which client limits). err is CounterDown when the
// counter could not be asked; a broken counter's answer (an index it was
// not given) must not panic a request, nor pass it.
func take(ctx context.Context, what string, c Counter, now time.Time, buckets []models.RateBucket) (int, error) {
	refused, err := c.TakeRateLimits(ctx, now, buckets)
	switch {
	case err != nil:
		return -1, CounterDown{What: what, Err: err}
	case refused >= len(buckets):
		return -1, fmt.Errorf("%s: the counter refused bucket %d of %d", what, refused, len(buckets))
	}
	return refused, nil
}

// CounterDown is Allow's error when the counter could not be asked: the
// database is down or failing over. Nothing is sent (a limit that cannot
// be checked lets no e-mail through), and the request is answered as an
// outage, "try again" (503 with Retry-After, by the web kit, which finds
// the mark by the method Unavailable), not as a refusal of the address.
// What names the limits whose counter it was: the e-mail limits, or the
// client limits of one use (the OpenID Provider's authorization requests
// share the counters).
type CounterDown struct {
	What string
	Err  error
}

func (e CounterDown) Error() string { return e.What + ": " + e.Err.Error() }
func (e CounterDown) Unwrap() error { return e.Err }

// Unavailable marks the error as a database outage.
func (CounterDown) Unavailable() bool { return true }
