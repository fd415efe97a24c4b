package app

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/random"
)

// What serve does around every request besides routing it: a request id
// (X-Request-Id), the access log line and the HTTP metrics. All of it is
// sized for GET /session, which runs on every page load: the route's label
// and metrics are resolved once when the route is registered, the state of
// a request lives in a pooled exchange, and the log line is one LogAttrs
// call whose five attributes slog keeps without allocating.

// headerRequestID is X-Request-Id in its canonical form.
const headerRequestID = "X-Request-Id"

// unmatchedRoute labels requests that no route took (404s, bad methods):
// a fixed value, so raw paths never become labels.
const unmatchedRoute = "unmatched"

// maxRequestIDLen bounds a request id taken from a proxy.
const maxRequestIDLen = 128

// routeTag is a route as the access log and the metrics name it: its
// pattern (never the raw path) and its metrics, made once.
type routeTag struct {
	pattern string
	metrics *metrics.Route // nil when metrics are off
	// bodiless: the route's answers carry no body (forward-auth; but for
	// a panic's 500, plain text under nosniff), so a browser has nothing
	// to run and documentPolicy adds no CSP.
	bodiless bool
	// keepOpener: the route's answers never carry
	// Cross-Origin-Opener-Policy: same-origin (web.KeepOpener's, for a
	// route mounted by path: the OpenID Provider's protocol endpoints).
	keepOpener bool
}

func (f *front) routeTag(pattern string) *routeTag {
	return &routeTag{pattern: pattern, metrics: f.metrics.Route(pattern)}
}

// tagged makes h record its route on the request's exchange.
func tagged(rt *routeTag, h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if x, ok := c.Response().Writer.(*exchange); ok {
			x.route = rt
		}
		return h(c)
	}
}

// exchange is one request in flight: the Set-Cookie tracker of its
// response (cookies.Tracker), the status written, the route that took it
// and its id. serve pools them.
type exchange struct {
	cookies.Tracker
	front   *front
	status  int
	written bool
	route   *routeTag
	id      string
}

func (x *exchange) reset(w http.ResponseWriter) {
	x.Tracker.Reset(w)
	x.status, x.written, x.route, x.id = http.StatusOK, false, nil, ""
}

// WriteHeader remembers the first status written and completes the head
// (documentPolicy) before net/http writes it.
func (x *exchange) WriteHeader(code int) {
	if !x.written {
		x.status, x.written = code, true
		x.front.documentPolicy(x.Header(), x.route)
	}
	x.Tracker.WriteHeader(code)
}

// Write without WriteHeader means 200, as net/http sends.
func (x *exchange) Write(b []byte) (int, error) {
	if !x.written {
		x.WriteHeader(http.StatusOK)
	}
	return x.Tracker.Write(b)
}

// FlushError writes the head (completed as WriteHeader does) and whatever
// is buffered: http.ResponseController finds it before Unwrap.
func (x *exchange) FlushError() error {
	if !x.written {
		x.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(&x.Tracker).Flush()
}

// finish completes the head of an answer nothing wrote to, which net/http
// sends as an empty 200 once the handler returns.
func (x *exchange) finish() {
	if !x.written {
		x.front.documentPolicy(x.Header(), x.route)
	}
}

// Unwrap lets http.ResponseController and the cookie writer reach the tracker.
func (x *exchange) Unwrap() http.ResponseWriter { return &x.Tracker }

// RequestID is the id of the request x answers, for log lines (web.RequestID).
func (x *exchange) RequestID() string { return x.id }

// requestID picks the request's id and echoes it in the response: the
// X-Request-Id a trusted proxy sent (one value, sane), else a new one;
// trusted_proxies decides, as for forward-auth's headers (proxies.Trusted).
// Anyone else's header is ignored, so a client cannot plant ids (or text)
// in the log.
func (f *front) requestID(r *http.Request, h http.Header) string {
	if v := r.Header[headerRequestID]; len(v) == 1 && saneRequestID(v[0]) && f.proxies.Peer(r.RemoteAddr) {
		h[headerRequestID] = v[:1:1]
		return v[0]
	}
	id := random.RequestID()
	h[headerRequestID] = []string{id}
	return id
}

// saneRequestID accepts 1 to 128 characters that need no quoting anywhere
// a log line may go: letters, digits and - _ . : + / =.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':' || c == '+' || c == '/' || c == '=':
		default:
			return false
		}
	}
	return true
}

// observe counts the answered request and writes its access log line:
// method, route pattern, status, duration and id. Never the path's query,
// cookies or other headers.
func (f *front) observe(x *exchange, r *http.Request, start time.Time) {
	logging := f.accessLog && f.access.Enabled()
	if f.metrics == nil && !logging {
		return
	}
	now := time.Now()
	took := now.Sub(start)
	rt := x.route
	if rt == nil {
		rt = f.unmatched
	}
	rt.metrics.Observe(x.status, took)
	if logging {
		f.access.Request(now, r.Method, rt.pattern, x.status, took, x.id)
	}
}
