package email

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// Defaults of ClientLimitConfig.
const (
	defaultClientWindow = 10 * time.Minute
	defaultPerClient    = 600
)

// ClientLimitConfig is a per-client allowance for requests that are not
// e-mails but, like them, cost the service something anyone can ask for
// unauthenticated (the OpenID Provider's stored authorization requests).
// A client is counted as the e-mail limits count one (ClientKey), and its
// network (NetworkKey) in a tier of its own. Zero (or negative) values
// take the defaults: 600 per client and 5 x that per network, per 10
// minutes.
type ClientLimitConfig struct {
	Disabled bool
	// Name keeps these buckets apart from every other limit's in the
	// counter store; it must hold a ":" (no provider id can), so that it
	// cannot be an e-mail provider's.
	Name       string
	PerClient  int
	PerNetwork int // per IPv6 /48 or IPv4 /24
	Window     time.Duration
}

// ClientLimits is a ClientLimitConfig over a counter store, shared by
// every instance on the database. Safe for concurrent use.
type ClientLimits struct {
	disabled     bool
	name         string
	counter      Counter
	client, netw tier
}

// NewClientLimits builds the limits over counter (nil only when disabled).
func NewClientLimits(cfg ClientLimitConfig, counter Counter) (*ClientLimits, error) {
	switch {
	case counter == nil && !cfg.Disabled:
		return nil, errors.New("client rate limits: no counter store")
	case !strings.Contains(cfg.Name, ":"):
		return nil, fmt.Errorf("client rate limits: name %q has no \":\", so it could be an e-mail provider's", cfg.Name)
	}
	if cfg.Window <= 0 {
		cfg.Window = defaultClientWindow
	}
	if cfg.PerClient <= 0 {
		cfg.PerClient = defaultPerClient
	}
	if cfg.PerNetwork <= 0 {
		cfg.PerNetwork = networkFactor * cfg.PerClient
	}
	l := &ClientLimits{
		disabled: cfg.Disabled, name: cfg.Name, counter: counter,
		client: newTier("ip", cfg.PerClient, cfg.Window), netw: newTier("net", cfg.PerNetwork, cfg.Window),
	}
	for _, t := range []tier{l.client, l.netw} {
		if t.interval < time.Microsecond {
			return nil, fmt.Errorf("client rate limits %s: %d per %v is more than one a microsecond", cfg.Name, t.burst, cfg.Window)
		}
	}
	return l, nil
}

// Allow reports whether clientIP ("host:port" or a bare IP) may have one
// more request, and counts it if so; a refusal counts nothing. The reason
// names the tier and the client's key, for the log. err is a counter that
// could not be asked (CounterDown): the caller refuses.
func (l *ClientLimits) Allow(ctx context.Context, clientIP string, now time.Time) (ok bool, reason string, err error) {
	if l.disabled {
		return true, "", nil
	}
	client := clientKey(clientIP)
	buckets := []models.RateBucket{l.client.bucket(l.name, client)}
	reasons := []string{"per-client limit reached for " + client}
	if key, _, ok := NetworkKey(clientIP); ok {
		buckets = append(buckets, l.netw.bucket(l.name, key))
		reasons = append(reasons, "per-network limit reached for "+key)
	}
	refused, err := take(ctx, "client rate limits "+l.name, l.counter, now, buckets)
	if err != nil || refused < 0 {
		return err == nil, "", err
	}
	return false, reasons[refused], nil
}
