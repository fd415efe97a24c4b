// Package weborigin writes configured origins and host names the way
// browsers send them (new URL(): lower-case ASCII, xn-- for Unicode, no
// default port), so that a configured value compares equal to an Origin,
// a Host or a WebAuthn client's origin.
package weborigin

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// ASCIIHost writes a URL's host name (no port, not a bracketed IPv6
// address) the way new URL() and browsers do: UTS #46 with the WHATWG URL
// standard's options, so Bücher.example is xn--bcher-kva.example and
// ＥＸＡＭＰＬＥ.com is example.com. That is the form browsers send in
// Origin, Host and a WebAuthn client's origin, so a configured name that
// is compared with them must be written in it too.
//
// A name that ends in a number is an IPv4 address, as new URL() reads it:
// 127.1, 0x7f.1 and 2130706433 are 127.0.0.1 (the forms inet_aton
// reads), the place a browser goes; one that is no address (1.2.3.256,
// a.1) is an error, as it is to new URL().
func ASCIIHost(host string) (string, error) {
	a, ok := plainASCII(host)
	if !ok {
		var err error
		if a, err = idnaHost(host); err != nil {
			return "", err
		}
	}
	if !endsInNumber(a) {
		return a, nil
	}
	ip, ok := ipv4(a)
	if !ok {
		return "", fmt.Errorf("host %q ends in a number but is not an IPv4 address", host)
	}
	return ip, nil
}

// endsInNumber is the URL standard's "ends in a number" check: the last
// label (a final empty one aside) is digits, or 0x and hex digits.
func endsInNumber(host string) bool {
	h := strings.TrimSuffix(host, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	hex, ok := strings.CutPrefix(strings.ToLower(last), "0x")
	return ok && strings.Trim(hex, "0123456789abcdef") == ""
}

// ipv4 is the URL standard's IPv4 parser, host written as a dotted quad:
// up to four numbers (decimal, 0x hex or 0 octal), all but the last below
// 256, the last filling the bytes left.
func ipv4(host string) (string, bool) {
	labels := strings.Split(host, ".")
	if labels[len(labels)-1] == "" && len(labels) > 1 {
		labels = labels[:len(labels)-1]
	}
	if len(labels) > 4 {
		return "", false
	}
	var addr uint64
	for i, l := range labels {
		n, ok := ipv4Number(l)
		last := i == len(labels)-1
		if !ok || !last && n > 255 || last && n >= 1<<(8*(5-len(labels))) {
			return "", false
		}
		if last {
			addr += n
		} else {
			addr += n << (8 * (3 - i))
		}
	}
	return netip.AddrFrom4([4]byte{byte(addr >> 24), byte(addr >> 16), byte(addr >> 8), byte(addr)}).String(), true
}

// ipv4Number is the URL standard's IPv4 number parser; a number too large
// for 64 bits is no address anyway.
func ipv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	if s[0] == '+' || s[0] == '-' || strings.Contains(s, "_") {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 64)
	return n, err == nil
}

// plainASCII is the usual host, letters, digits, dots and dashes with no
// xn-- label, which UTS #46 maps to its lower case and nothing else:
// forward-auth compares addresses on every request, and the full mapping
// costs some microseconds. ok is false for any other host.
func plainASCII(host string) (string, bool) {
	for i := 0; i < len(host); i++ {
		if c := host[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return "", false
		}
	}
	lower := strings.ToLower(host)
	if host == "" || strings.HasPrefix(lower, "xn--") || strings.Contains(lower, ".xn--") {
		return "", false
	}
	return lower, true
}

// idnaHost is ASCIIHost through the full mapping.
func idnaHost(host string) (string, error) {
	// WHATWG's domain to ASCII: CheckHyphens and UseSTD3ASCIIRules off
	// (a_b and -x- are hosts), CheckBidi and CheckJoiners on, no
	// transitional mapping (faß stays faß), no DNS length check.
	p := idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false),
		idna.CheckHyphens(false), idna.CheckJoiners(true), idna.StrictDomainName(false), idna.VerifyDNSLength(false))
	a, err := p.ToASCII(host)
	if err != nil || a == "" {
		return "", fmt.Errorf("host %q is not a valid domain name", host)
	}
	// An empty punycode label, which UTS #46 15.1 refuses and x/net not;
	// then the standard's forbidden domain code points.
	if emptiedLabel(host, a) {
		return "", fmt.Errorf("host %q is not a valid domain name", host)
	}
	if i := strings.IndexFunc(a, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune("#%/:<>?@[\\]^|", r)
	}); i >= 0 {
		return "", fmt.Errorf("host %q has a character no host name may have", host)
	}
	return a, nil
}

// emptiedLabel reports whether ToASCII turned a label of host into an
// empty one: x/net reads "xn--" as the punycode of nothing, UTS #46 15.1
// (and new URL()) as an error.
func emptiedLabel(host, ascii string) bool {
	in := strings.FieldsFunc(host, func(r rune) bool { return strings.ContainsRune(".。．｡", r) })
	out := strings.Split(ascii, ".")
	nonEmpty := 0
	for _, l := range out {
		if l != "" {
			nonEmpty++
		}
	}
	return nonEmpty < len(in)
}

// Origin is u's origin as new URL() writes it: scheme://host[:port] with
// the host in lower-case ASCII (ASCIIHost) and the port without leading
// zeros, left out when it is the scheme's default (or empty, "ex.com:").
// u is an http(s) URL with a host.
func Origin(u *url.URL) (string, error) {
	host := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		host = "[" + strings.ToLower(host) + "]"
	} else {
		a, err := ASCIIHost(host)
		if err != nil {
			return "", err
		}
		host = a
	}
	if port := u.Port(); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("port %q is not a TCP port", port)
		}
		if n != map[string]int{"http": 80, "https": 443}[u.Scheme] {
			host += ":" + strconv.Itoa(n)
		}
	}
	return u.Scheme + "://" + host, nil
}

// Normal reads a configured origin (https://app.example.com, with
// at most a trailing "/") and writes it as a browser's Origin header
// does; ok is false for anything else (a path, query, credentials or a
// scheme other than http and https), which config's Validate refuses.
func Normal(raw string) (o string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#") {
		return "", false
	}
	o, err = Origin(u)
	return o, err == nil
}

// Host writes a configured host name (cookies.domain, an access
// rule's host, rp_id) in ASCII; a name that is not one stays as it is,
// for config's Validate to refuse.
func Host(h string) string {
	if a, err := ASCIIHost(h); err == nil {
		return a
	}
	return h
}

// MailName writes the domain of a configured address (ada@Bücher.example)
// or domain (Bücher.example, @Bücher.example) in ASCII, the form
// email.Comparable writes an address in, so that either spelling of a
// domain matches the other. One whose domain is no name stays as written,
// for config's Validate to refuse.
func MailName(entry string) string {
	e := strings.TrimSpace(entry)
	at := strings.LastIndexByte(e, '@')
	if a, err := ASCIIHost(e[at+1:]); err == nil {
		return e[:at+1] + a
	}
	return entry
}

// ASCIIHostURL writes the host of an http(s) URL that has non-ASCII
// characters in it in ASCII (https://bücher.example/cb is
// https://xn--bcher-kva.example/cb), and one that ends in a number as a
// dotted quad (http://127.1/cb is http://127.0.0.1/cb), as a relying party
// that builds its redirect URI with new URL() or location.origin sends it;
// the rest of the URL, and any other URL, is kept as written, since
// redirect URIs match exactly.
func ASCIIHostURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || (!strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https")) {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if strings.ContainsAny(authority, "@[%") {
		return raw
	}
	host, port := authority, ""
	if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		host, port = authority[:i], authority[i:]
	}
	if !hasNonASCII(host) && !endsInNumber(host) {
		return raw
	}
	a, err := ASCIIHost(host)
	if err != nil {
		return raw
	}
	return scheme + "://" + a + port + rest[end:]
}

func hasNonASCII(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 }) >= 0
}
