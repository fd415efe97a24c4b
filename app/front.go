package app

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/proxies"
	"github.com/latchkey-auth/latchkey/app/web"
)

// front is what every answer passes through, around the route table the
// feature handlers mounted (routes.go): the security headers and the
// Content-Security-Policy (headers.go), the request id, the access log
// line and the HTTP metrics (observe.go), next-auth's answers to routing
// misses (handleError). It knows no feature.
type front struct {
	echo     *echo.Echo
	basePath string
	log      *slog.Logger

	// hsts is the Strict-Transport-Security value under https; nil over
	// http, where no answer carries it (securityHeaders).
	hsts []string
	csp  cspCache
	// What the pages' Content-Security-Policy names (contentSecurityPolicy).
	origin         string            // the service's
	allowedOrigins []string          // allowed_redirect_origins
	pages          config.Pages      // custom pages given as absolute URLs
	idps           identityProviders // the OAuth and OIDC providers (app/oauthflow)
	passkeys       bool              // passkeys are offered: the pages run latchkey's script
	imgOrigin      string            // the theme's logo's origin when elsewhere
	// clientURIs are the OpenID Provider's clients' URIs (nil: it is off).
	clientURIs func() []string

	exchanges sync.Pool       // *exchange, one per response in flight (serve)
	proxies   proxies.Trusted // trusted_proxies: whose X-Request-Id is taken
	// forwardedWarned: an untrusted peer's forwarding headers were
	// logged once (warnForwarded).
	forwardedWarned atomic.Bool
	metrics         *metrics.Metrics // nil: metrics are off
	accessLog       bool             // log.access
	access          *logs.Access     // where access lines go
	unmatched       *routeTag        // requests no route took
	// protocol are the Protocol routes' paths (a trailing / is a prefix):
	// OPTIONS reaches them.
	protocol []string
}

// newFront prepares the envelope; mount gives it its routes.
func newFront(cfg config.Config, base config.Base, log *slog.Logger, access *logs.Access, m *metrics.Metrics) *front {
	f := &front{
		basePath: base.Path, log: log, origin: base.Origin, allowedOrigins: cfg.AllowedRedirectOrigins, pages: cfg.Pages,
		proxies: proxies.New(cfg.TrustedProxies), metrics: m, accessLog: cfg.Log.Access, access: access,
	}
	if v := cfg.HSTSValue(); v != "" {
		f.hsts = web.HeaderValue(v)
	}
	f.unmatched = f.routeTag(unmatchedRoute)
	f.exchanges.New = func() any { return &exchange{front: f} }
	return f
}

// ServeHTTP is the whole service (serve).
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.serve(w, r) }

// forwardingHeaders are those a reverse proxy adds to name the client,
// and those forward-auth reads the protected request from.
var forwardingHeaders = [...]string{"X-Forwarded-For", "Forwarded", "X-Real-Ip", "X-Forwarded-Host", "X-Original-Url"}

// warnForwarded logs, once per process, a request that carries a
// forwarding header from a peer outside trusted_proxies: behind a proxy
// left out of the setting every client has the proxy's address, so the
// per-client throttles lump them together and one owner's sign-in
// exempts them all from the account's password block; forward-auth
// believes no host the proxy names. Once, not per
// request: a client may send such headers on purpose. The header's value
// is never logged (anyone may write it).
func (f *front) warnForwarded(r *http.Request) {
	if f.forwardedWarned.Load() {
		return
	}
	for _, name := range forwardingHeaders {
		if _, ok := r.Header[name]; ok {
			if f.proxies.Peer(r.RemoteAddr) || !f.forwardedWarned.CompareAndSwap(false, true) {
				return
			}
			f.log.Warn("forwarding header from a peer outside trusted_proxies ignored (logged once)",
				"header", name, "peer", peerHost(r.RemoteAddr),
				"hint", "behind a reverse proxy, list its address in trusted_proxies, else every client behind it shares its rate limits and password block exemptions",
				"docs", "docs/operations.md#behind-a-reverse-proxy")
			return
		}
	}
}

// peerHost is a peer address without its port.
func peerHost(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}
