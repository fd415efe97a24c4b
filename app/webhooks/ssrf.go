package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrRefusedAddress is a dial to an address the endpoint may not reach:
// a mis-set (or hostile) URL or DNS answer must not turn latchkey into a
// way into the operator's own network (SSRF).
var ErrRefusedAddress = errors.New("webhook: address refused")

// Ranges refused on top of netip's classes: shared address space (carrier
// NAT, RFC 6598) and "this network" (0/8, which Linux dials as local).
var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	// IPv6 prefixes that carry an IPv4 address (NAT64, 6to4): the address
	// inside is checked as well, so 64:ff9b::a00:1 is 10.0.0.1.
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 is the IPv4 address a NAT64 or 6to4 address carries.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// CheckIP says whether a webhook may connect to ip. Unspecified, "this
// network", multicast and broadcast addresses are always refused; private
// (10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10) and link-local
// (169.254/16 — cloud metadata — and fe80::/10) unless allowPrivate;
// loopback unless allowLoopback or allowPrivate. An IPv4 address inside a
// NAT64 or 6to4 address is held to the same rules. app/config's
// validation of literal IPs in URLs can use it too.
func CheckIP(ip netip.Addr, allowLoopback, allowPrivate bool) error {
	ip = ip.Unmap()
	if v4, ok := embeddedIPv4(ip); ok {
		if err := CheckIP(v4, allowLoopback, allowPrivate); err != nil {
			return fmt.Errorf("%w (inside %s)", err, ip)
		}
	}
	switch {
	case !ip.IsValid():
		return fmt.Errorf("%w: not an IP address", ErrRefusedAddress)
	case ip.IsUnspecified() || thisNetwork.Contains(ip):
		return fmt.Errorf("%w: %s is unspecified", ErrRefusedAddress, ip)
	case ip.IsMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("%w: %s is multicast or broadcast", ErrRefusedAddress, ip)
	case ip.IsLoopback():
		if allowLoopback || allowPrivate {
			return nil
		}
		return fmt.Errorf("%w: %s is loopback and the URL's host is not", ErrRefusedAddress, ip)
	case ip.IsPrivate() || sharedSpace.Contains(ip):
		if allowPrivate {
			return nil
		}
		return fmt.Errorf("%w: %s is private (allow_private is off)", ErrRefusedAddress, ip)
	case ip.IsLinkLocalUnicast():
		if allowPrivate {
			return nil
		}
		return fmt.Errorf("%w: %s is link-local (allow_private is off)", ErrRefusedAddress, ip)
	}
	return nil
}

// IsLoopbackHost reports whether a URL's host names loopback literally:
// "localhost", 127.0.0.0/8 or ::1. Only then may a webhook without
// allow_private reach loopback (a local receiver, as for SMTP), so a
// public name whose DNS answers 127.0.0.1 cannot reach local services.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

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
	return CheckIP(ip.WithZone(""), d.policy.loopback, d.policy.private)
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
