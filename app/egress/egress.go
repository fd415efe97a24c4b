// Package egress is the policy for addresses latchkey connects out to on
// an operator's say-so (webhook endpoints, the SMTP server): which IP
// ranges belong inside the operator's network, and which host names count
// as loopback. One implementation, so that what check-config accepts in a
// URL and what the webhook dialer lets through at connect time cannot
// drift apart.
package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// ErrRefusedAddress is a connection to an address the caller may not
// reach: a mis-set (or hostile) URL or DNS answer must not turn latchkey
// into a way into the operator's own network (SSRF).
var ErrRefusedAddress = errors.New("webhook: address refused")

// Ranges refused on top of netip's classes: shared address space (carrier
// NAT, RFC 6598) and "this network" (0/8, which Linux dials as local).
var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	broadcast   = netip.AddrFrom4([4]byte{255, 255, 255, 255})
	// IPv6 prefixes that carry an IPv4 address (NAT64, 6to4, the
	// deprecated IPv4-compatible ::a.b.c.d): the address inside is checked
	// as well, so 64:ff9b::a00:1 is 10.0.0.1 and ::10.0.0.1 is too.
	nat64        = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour    = netip.MustParsePrefix("2002::/16")
	v4Compatible = netip.MustParsePrefix("::/96")
	// NAT64's local-use prefix (RFC 8215) translates inside the operator's
	// own network, at a prefix length of the operator's choosing, so it
	// is private whatever it carries.
	localNAT64 = netip.MustParsePrefix("64:ff9b:1::/48")
)

// embeddedIPv4 is the IPv4 address a NAT64, 6to4 or IPv4-compatible
// address carries (:: and ::1 are themselves, not 0.0.0.0 and 0.0.0.1).
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case nat64.Contains(ip), v4Compatible.Contains(ip) && !ip.IsUnspecified() && !ip.IsLoopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// CheckIP says whether a connection to ip is allowed. Unspecified, "this
// network", multicast and broadcast addresses are always refused; private
// (10/8, 172.16/12, 192.168/16, fc00::/7, 64:ff9b:1::/48, 100.64/10) and link-local
// (169.254/16 — cloud metadata — and fe80::/10) unless allowPrivate;
// loopback unless allowLoopback or allowPrivate. An IPv4 address inside a
// NAT64, 6to4 or IPv4-compatible address is held to the same rules.
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
	case ip.IsLoopback():
		if allowLoopback || allowPrivate {
			return nil
		}
		return fmt.Errorf("%w: %s is loopback and the URL's host is not", ErrRefusedAddress, ip)
	}
	switch r := Range(ip); r {
	case "":
		return nil
	case RangeUnspecified, RangeMulticast:
		return fmt.Errorf("%w: %s is %s", ErrRefusedAddress, ip, r)
	case RangeShared: // worded as before the ranges were named apart
		r = RangePrivate
		fallthrough
	default:
		if allowPrivate {
			return nil
		}
		return fmt.Errorf("%w: %s is %s (allow_private is off)", ErrRefusedAddress, ip, r)
	}
}

// The ranges Range names.
const (
	RangeUnspecified = "unspecified"
	RangeMulticast   = "multicast or broadcast"
	RangePrivate     = "private"
	RangeShared      = "shared (CGNAT)"
	RangeLinkLocal   = "link-local"
)

// Range names the internal range ip belongs to, "" for a public (or
// loopback) address: what a message says when it refuses ip. Only ip
// itself is looked at, not an IPv4 address inside it (CheckIP does that).
func Range(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified() || thisNetwork.Contains(ip):
		return RangeUnspecified
	case ip.IsMulticast() || ip == broadcast:
		return RangeMulticast
	case ip.IsPrivate() || localNAT64.Contains(ip):
		return RangePrivate
	case sharedSpace.Contains(ip):
		return RangeShared
	case ip.IsLinkLocalUnicast():
		return RangeLinkLocal
	}
	return ""
}

// IsLoopbackHost reports whether a URL's host names loopback literally:
// "localhost", 127.0.0.0/8 or ::1 (brackets, case and a final dot
// aside). Only such a host may be reached without TLS or allow_private (a
// local receiver, as for SMTP): a public name whose DNS answers 127.0.0.1
// is not trusted to stay local.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// URLProblem says what is wrong with a configured endpoint URL, such as a
// webhook's ("": nothing).
// https is required except to a loopback host, as for SMTP; a literal IP
// address in a range that belongs inside the operator's network (private,
// shared CGNAT, link-local such as the 169.254.169.254 cloud metadata
// service, unspecified, multicast) is refused unless allowPrivate. Host
// names are checked when delivering, by the address they resolve to.
func URLProblem(raw string, allowPrivate bool) string {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "is not an absolute https URL like https://hooks.example.com/latchkey"
	}
	shown := u.Scheme + "://" + u.Host
	host := u.Hostname()
	loopback := IsLoopbackHost(host)
	switch {
	case u.User != nil:
		return shown + " holds a user name or password: leave them out (the signature proves the sender, and the URL appears in logs and commands)"
	case u.Scheme == "http" && !loopback:
		return shown + " uses http for a host other than loopback (use https)"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || loopback || allowPrivate {
		return ""
	}
	if r := Range(ip); r != "" {
		return fmt.Sprintf("%s is a %s address, inside a network rather than on the internet: refused unless allow_private: true", shown, r)
	}
	return ""
}
