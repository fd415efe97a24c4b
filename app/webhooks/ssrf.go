package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/latchkey-auth/latchkey/app/egress"
)

// ErrRefusedAddress is a dial to an address the endpoint may not reach
// (app/egress decides which): errors.Is finds it in Send's error.
var ErrRefusedAddress = egress.ErrRefusedAddress

// policy is what a client may dial.
type policy struct{ loopback, private bool }

// Resolver finds a host's addresses; net.DefaultResolver.LookupNetIP in
// production, a fixed answer in tests.
type Resolver func(ctx context.Context, host string) ([]netip.Addr, error)

func defaultResolver(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// dialer dials only addresses its policy allows. It resolves the host
// itself and dials each address in turn; the net.Dialer's Control checks
// the very address the socket connects to, so neither a DNS answer nor a
// literal IP in the URL gets past the check.
type dialer struct {
	policy  policy
	resolve Resolver
	net     net.Dialer
}

func newDialer(p policy, resolve Resolver, timeout time.Duration) *dialer {
	d := &dialer{policy: p, resolve: resolve}
	d.net = net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: d.control}
	return d
}

// control runs after resolution, before connect, with the address dialled.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefusedAddress, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefusedAddress, address)
	}
	return egress.CheckIP(ip.WithZone(""), d.policy.loopback, d.policy.private)
}

// DialContext is http.Transport's dial.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = d.resolve(ctx, host); err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var errs []error
	for _, ip := range ips {
		conn, err := d.net.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", host)
	}
	return nil, errors.Join(errs...)
}
