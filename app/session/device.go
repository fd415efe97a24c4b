package session

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/mileusna/useragent"
)

// Where a session was started, as the account page lists it: a readable
// device summary and a coarse network hint. Both are recorded once, when
// the session starts; neither is an identity, and the hint never holds a
// whole address.

// ClientIP is the request's client address as the listener's trusted
// proxies tell it (Echo's IP extractor); nil: the peer address.
type ClientIP func(*http.Request) string

// describe is r's device summary and network hint.
func describe(r *http.Request, clientIP ClientIP) (device, network string) {
	if r == nil {
		return "", ""
	}
	ip := ""
	if clientIP != nil {
		ip = clientIP(r)
	} else if addr, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		ip = addr.Addr().String()
	}
	return DeviceSummary(r.UserAgent()), NetworkHint(ip)
}

// DeviceSummary is a user agent as a person reads it, "Firefox 128 on
// Linux", parsed by mileusna/useragent; "" when it tells nothing. It is
// bounded, since the header is the client's to choose.
func DeviceSummary(ua string) string {
	if ua == "" {
		return ""
	}
	if len(ua) > 1024 {
		ua = ua[:1024]
	}
	p := useragent.Parse(ua)
	name := p.Name
	if v := major(p.Version); name != "" && v != "" {
		name += " " + v
	}
	os := p.OS
	if os != "" && p.Device != "" {
		os = p.Device + ", " + os
	}
	var out string
	switch {
	case name != "" && os != "":
		out = name + " on " + os
	default:
		out = name + os
	}
	if len(out) > 100 {
		out = out[:100]
	}
	return strings.ToValidUTF8(out, "")
}

// major is a version's first number ("128.0.1" → "128").
func major(v string) string {
	if i := strings.IndexByte(v, '.'); i > 0 {
		return v[:i]
	}
	return v
}

// NetworkHint is the network an address is in, coarsely: its /24 (IPv4)
// or /48 (IPv6), enough to tell "at home" from "abroad" without keeping
// the address; "" for none.
func NetworkHint(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ""
	}
	a = a.Unmap()
	bits := 48
	if a.Is4() {
		bits = 24
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return ""
	}
	return p.String()
}
