package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/latchkey-auth/latchkey/app/logs"
	"github.com/latchkey-auth/latchkey/app/web"
)

// mounter is a feature handler: it mounts its routes on the table.
type mounter interface{ Mount(web.Mux) }

// mux is the route table as a feature handler sees it (web.Mux). Route
// middleware and Recover are composed here, once: given to echo as route
// middleware (or Use) they would be re-applied on every request. Recover
// wraps them all. Each route is tagged with its pattern (access log,
// metrics).
type mux struct {
	f             *front
	kit           *web.Kit
	e             *echo.Echo
	g             *echo.Group // the base path
	recoverPanics echo.MiddlewareFunc
	checked       map[string]bool // POST routes with a CSRF rule
}

func (m mux) route(path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return tagged(m.f.routeTag(path), m.recoverPanics(h))
}

func (m mux) Get(path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	m.g.GET(path, m.route(m.f.basePath+path, h, mw...))
}

func (m mux) Page(path string, h web.Action, mw ...echo.MiddlewareFunc) {
	m.Get(path, m.kit.WithRequest(h), mw...)
}

func (m mux) Post(path string, h, onMismatch web.Action, mw ...echo.MiddlewareFunc) {
	m.g.POST(path, m.route(m.f.basePath+path, m.kit.WithCSRF(h, onMismatch), mw...))
	m.checked[m.f.basePath+path] = true
}

func (m mux) PostWithoutCSRF(path string, h echo.HandlerFunc) {
	m.g.POST(path, m.route(m.f.basePath+path, h))
	m.checked[m.f.basePath+path] = true
}

func (m mux) RootGet(path string, h echo.HandlerFunc) {
	h = m.route(path, h)
	m.e.GET(path, h)
	m.e.HEAD(path, h)
}

func (m mux) RootAny(path string, h echo.HandlerFunc) {
	rt := m.f.routeTag(path)
	rt.bodiless = true // no body: documentPolicy adds no CSP
	m.e.Any(path, tagged(rt, m.recoverPanics(h)))
	m.checked[path] = true // nothing posted is read: no CSRF rule applies
}

func (m mux) Protocol(path string, h http.Handler) {
	full := m.f.basePath + path
	rt := m.f.routeTag(full)
	// The authorization and end-session endpoints' redirects are hops of
	// a journey an app may run in a popup (documentPolicy).
	rt.keepOpener = true
	m.g.Any(path, tagged(rt, m.recoverPanics(m.kit.Protocol(h))))
	m.checked[full] = true // the handler authenticates its callers
	m.f.protocol = append(m.f.protocol, strings.TrimSuffix(full, "*"))
}

// mount builds the route table: every feature handler mounts its routes
// on it (web.Mux). Every POST route states its answer to a csrfToken that
// does not match the cookie (next-auth's differ per route); a POST route
// registered without one is an error. trusted are trusted_proxies, whose
// X-Forwarded-For names the client (clientIP).
func (f *front) mount(kit *web.Kit, trusted []string, handlers ...mounter) error {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = f.handleError
	e.IPExtractor = clientIP(trusted)
	// No Pre or Use middleware: echo re-applies those on every request (a
	// closure each). What every answer needs, routing misses and errors
	// included, is done around echo by serve.
	m := mux{f: f, kit: kit, e: e, g: e.Group(f.basePath), recoverPanics: middleware.Recover(), checked: map[string]bool{}}
	for _, h := range handlers {
		h.Mount(m)
	}
	for _, r := range e.Routes() {
		if r.Method == http.MethodPost && !m.checked[r.Path] {
			return fmt.Errorf("route POST %s has no CSRF rule", r.Path)
		}
	}
	f.echo = e
	return nil
}

// clientIP is how c.RealIP() finds the client: the peer address, or the
// X-Forwarded-For entry left by the nearest untrusted hop when the peer is a
// configured proxy. Forwarding headers from anyone else are ignored, so a
// client cannot pick its own rate-limit key.
func clientIP(trusted []string) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, cidr := range trusted {
		if _, n, err := net.ParseCIDR(cidr); err == nil { // Validate has rejected bad ones
			opts = append(opts, echo.TrustIPRange(n))
		}
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// serve is the whole service: echo's router with, around it, what every
// answer needs, routing misses and errors included:
//   - the security headers (securityHeaders), first, so every answer
//     carries them, and when the head is written the Referrer-Policy on
//     every answer but JSON, the Content-Security-Policy on every answer
//     but JSON and forward-auth's (documentPolicy);
//   - the request id, echoed in X-Request-Id (observe.go);
//   - the Set-Cookie tracker (cookies.Tracker, in the pooled exchange):
//     replacing a line is O(1);
//   - OPTIONS under the base path gets next-auth's 400 "not supported"
//     (via handleError) like every other method but GET and POST; echo
//     would otherwise answer it itself with 204 and an Allow header;
//   - the HTTP metrics and the access log line: method, route pattern
//     (never the path or its query, which can carry e-mail tokens),
//     status, duration and request id (observe).
func (f *front) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	f.securityHeaders(h)
	x := f.exchanges.Get().(*exchange)
	x.reset(w)
	x.id = f.requestID(r, h)
	f.warnForwarded(r)
	start := time.Now()
	f.route(x, r)
	x.finish()
	f.observe(x, r, start)
	x.reset(nil) // nothing writes to the response once echo returns
	f.exchanges.Put(x)
}

// route hands a request to echo, or answers OPTIONS under the base path
// with handleError's 400 (a rare request: a context of its own is fine).
func (f *front) route(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions && f.underBase(r.URL.Path) && !f.isProtocol(r.URL.Path) {
		f.handleError(echo.ErrMethodNotAllowed, f.echo.NewContext(r, w))
		return
	}
	f.echo.ServeHTTP(w, r)
}

// isProtocol reports whether path is a Protocol route's (a prefix for
// one ending in *).
func (f *front) isProtocol(path string) bool {
	for _, p := range f.protocol {
		if path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// underBase reports whether path is the base path or below it.
func (f *front) underBase(path string) bool {
	return path == f.basePath || strings.HasPrefix(path, f.basePath) && path[len(f.basePath)] == '/'
}

// handleError turns routing misses and early failures into next-auth's
// answers: an unknown action or method under the base path is a 400 text
// "not supported" (never a 500); anything else keeps its status.
func (f *front) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if !errors.As(err, &he) {
		logs.RequestFailed(f.log, slog.LevelError, err, "unhandled error", "path", c.Request().URL.Path, "request_id", web.RequestID(c), "err", err)
		he = echo.NewHTTPError(http.StatusInternalServerError, "internal error")
	}
	r := c.Request()
	underBase := f.underBase(r.URL.Path)
	var status int
	var body string
	switch {
	case (he.Code == http.StatusNotFound || he.Code == http.StatusMethodNotAllowed) && underBase:
		status, body = http.StatusBadRequest, "Error: This action with HTTP "+r.Method+" is not supported by NextAuth.js"
	case he.Code == http.StatusInternalServerError:
		status, body = he.Code, "Internal Server Error"
	default:
		status, body = he.Code, http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok {
			body = m
		}
	}
	if r.Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.String(status, body)
}
