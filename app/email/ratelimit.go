package email

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/netip"
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// tier is one kind of allowance (per client, per network, ...): n events
// per window for each of its keys, n at once and then one more every
// window/n (a token bucket; the counter keeps its state).
type tier struct {
	name     string // in the bucket key
	interval time.Duration
	burst    int
}

func newTier(name string, n int, window time.Duration) tier {
	return tier{name: name, interval: window / time.Duration(n), burst: n}
}

// bucket is this tier's bucket for key (a client, a network, an address),
// named for the counter store by bucketKey.
func (t tier) bucket(provider string, key ...string) models.RateBucket {
	return models.RateBucket{Key: bucketKey(provider, t.name, key...), Interval: t.interval, Burst: t.burst}
}

// bucketLabel keys the HMAC of bucketKey. A fixed label, not the app's
// secret: the hash only has to keep addresses and IPs out of the counter
// table (anyone who can read it can read users.email too), and a key that
// does not change with the secret keeps the counters across a secret
// rotation and equal on instances midway through one.
const bucketLabel = "latchkey e-mail rate-limit bucket v1"

// bucketKey names a bucket in the counter store: provider and tier in
// clear (an operator can see which tier holds rows), the key's parts as an
// HMAC-SHA256, since the store is no place for e-mail addresses or client
// IPs. Provider ids cannot hold ":", so names cannot collide.
func bucketKey(provider, tier string, key ...string) string {
	if len(key) == 0 {
		return provider + ":" + tier
	}
	h := hmac.New(sha256.New, []byte(bucketLabel))
	for _, k := range key {
		h.Write([]byte(k))
		h.Write([]byte{0}) // parts end in NUL: ("ab","c") is not ("a","bc")
	}
	return provider + ":" + tier + ":" + hex.EncodeToString(h.Sum(nil))
}

// clientKey is the rate-limit key of a client address ("host:port" or a bare
// IP): the IP for IPv4, its /64 for IPv6, since one subscriber usually holds
// a whole /64 and could otherwise rotate through it.
func clientKey(remoteAddr string) string {
	ip, ok := parseIP(remoteAddr)
	if !ok {
		return remoteAddr
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// NetworkKey is the key of a client's network, counted in a tier of its
// own beside the client's: the /48 of an IPv6 client, the usual allocation
// of one site, so that a client rotating through /64s still counts against
// it; the /24 of an IPv4 one, so that a client holding many addresses of
// one block (a hosting or a cloud range) does too. ipv6 tells which: the
// two have their own allowances. ok is false when remoteAddr is no IP.
// Password sign-in's throttle (app/signin) counts networks the same way.
func NetworkKey(remoteAddr string) (key string, ipv6, ok bool) {
	ip, ok := parseIP(remoteAddr)
	if !ok {
		return "", false, false
	}
	bits := 24
	if ip.Is6() {
		bits = 48
	}
	p, _ := ip.Prefix(bits)
	return p.String(), ip.Is6(), true
}

func parseIP(remoteAddr string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap().WithZone(""), true
}
