package config

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// The service's listener is listen (LISTEN) and port (PORT) together:
// listen names only the address, so that the port stays where platforms
// that assign one (PORT) put it, and no two settings can name different
// ports. Empty listen is every interface, as before listen existed.

// ListenAddr is the address the service listens on: host:port, or :port
// on every interface when listen is empty.
func (c *Config) ListenAddr() string {
	return net.JoinHostPort(listenHost(c.Listen), strconv.Itoa(c.Port))
}

// listenHost is listen without the brackets an IPv6 address may be
// written in, and without surrounding space.
func listenHost(v string) string {
	v = strings.TrimSpace(v)
	if inner, ok := strings.CutPrefix(v, "["); ok {
		if inner, ok := strings.CutSuffix(inner, "]"); ok {
			return inner
		}
	}
	return v
}

// validateListen: an IP address (IPv6 with or without brackets, a zone
// allowed) or a host name, never a port (that is port's job; a port here
// would compete with PORT).
func (c *Config) validateListen(add func(string, ...any)) {
	if strings.TrimSpace(c.Listen) == "" {
		return
	}
	host := listenHost(c.Listen)
	if _, err := netip.ParseAddr(host); err == nil {
		return
	}
	if h, p, err := net.SplitHostPort(strings.TrimSpace(c.Listen)); err == nil && isNumber(p) {
		add("listen (LISTEN): %q names a port; listen takes the address alone (e.g. %s) and port (PORT) the port", c.Listen, h)
		return
	}
	if !hostName.MatchString(host) {
		add("listen (LISTEN): %q is not an IP address or host name, e.g. 127.0.0.1, ::1 or localhost", c.Listen)
	}
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 16)
	return err == nil
}
