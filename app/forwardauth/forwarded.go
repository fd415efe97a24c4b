package forwardauth

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// maxForwarded bounds each forwarding header; longer ones are ignored (the
// redirect policy refuses longer URLs anyway).
const maxForwarded = 2048

// forwarded is the request a proxy asks forward-auth about.
type forwarded struct {
	url      string // scheme://host[:port]/path?query, "" when unknown
	hostname string // lower-case, no port, "" when unknown
}

// forwardedHost is host[:port] as a proxy may forward it: a DNS name or an
// IP literal, nothing else (no user info, spaces, commas or slashes).
var forwardedHost = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$`)

// forwardedOf reads the original request from the proxy's headers: nginx's
// X-Original-URL (a whole URL) or else Traefik's and Caddy's
// X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Uri. They are
// believed only when the peer is in trusted_proxies: anyone else could
// name any host and have forward-auth build a sign-in link back to it or
// pick the access rule it is judged by. Oversized, listed (comma) or
// malformed values count as absent.
//
// A proxy sets one of the two and may pass the other on from the client
// (nginx and Traefik copy the request's headers): when both come and name
// different hosts, the host is unknown, so a client cannot choose the
// access rule it is judged by.
func (h *Handler) forwardedOf(r *http.Request) forwarded {
	hdr := r.Header
	orig, fwdHost := single(hdr, "X-Original-Url"), single(hdr, "X-Forwarded-Host")
	if orig == "" && fwdHost == "" {
		return forwarded{}
	}
	if !h.proxies.Peer(r.RemoteAddr) {
		return forwarded{} // the service's front logs it once (app/front.go)
	}
	if orig != "" {
		f := parseOriginalURL(orig)
		if fwdHost != "" && (len(fwdHost) > maxForwarded || hostnameOf(fwdHost) != f.hostname) {
			return forwarded{}
		}
		return f
	}
	proto := strings.ToLower(single(hdr, "X-Forwarded-Proto"))
	uri := single(hdr, "X-Forwarded-Uri")
	if len(fwdHost) > maxForwarded || !forwardedHost.MatchString(fwdHost) {
		return forwarded{}
	}
	f := forwarded{hostname: hostnameOf(fwdHost)}
	if uri == "" {
		uri = "/"
	}
	if (proto == "http" || proto == "https") && uri[0] == '/' && len(uri) <= maxForwarded {
		f.url = proto + "://" + fwdHost + uri
	}
	return f
}

// parseOriginalURL reads X-Original-URL: an absolute http(s) URL with a
// plain host.
func parseOriginalURL(raw string) forwarded {
	if len(raw) > maxForwarded {
		return forwarded{}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Opaque != "" || !forwardedHost.MatchString(u.Host) {
		return forwarded{}
	}
	return forwarded{url: raw, hostname: hostnameOf(u.Host)}
}

// hostnameOf is host[:port] without the port and a trailing dot, lower-cased.
func hostnameOf(hostport string) string {
	host := hostport
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host = hostport[:i]
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return strings.ToLower(host)
}

// single is a forwarding header's one value, or "" when it is absent or
// sent more than once: a proxy that adds its line after the client's
// instead of replacing it must not let the client's copy be read first.
func single(h http.Header, key string) string {
	if v := h.Values(key); len(v) == 1 {
		return v[0]
	}
	return ""
}
