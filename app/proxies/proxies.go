// Package proxies knows which peers are the operator's reverse proxies
// (trusted_proxies): only their forwarding headers (X-Forwarded-*,
// X-Original-URL, X-Request-Id) are believed.
package proxies

import (
	"net"
	"net/netip"
)

// Trusted is the compiled trusted_proxies list. The zero Trusted trusts
// no one.
type Trusted struct {
	prefixes []netip.Prefix
}

// New compiles validated CIDRs; config validation has refused bad ones,
// which are skipped here.
func New(cidrs []string) Trusted {
	var t Trusted
	for _, cidr := range cidrs {
		if _, n, err := net.ParseCIDR(cidr); err == nil {
			if p, err := netip.ParsePrefix(n.String()); err == nil {
				t.prefixes = append(t.prefixes, p)
			}
		}
	}
	return t
}

// Peer reports whether a request's peer address (r.RemoteAddr, never a
// header) is a trusted proxy.
func (t Trusted) Peer(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap()
	for _, p := range t.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
