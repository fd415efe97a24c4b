package client

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Options configure a [Middleware]. The zero value answers 401 to requests
// without a user and 503 when latchkey cannot be asked.
type Options struct {
	// Redirect makes RequireUser send GET and HEAD requests without a user
	// to latchkey's sign-in page, which brings them back here afterwards
	// (other methods still get 401). Needs SignInBase and PublicOrigin.
	Redirect bool
	// SignInBase is latchkey's base URL as the browser sees it (its
	// SERVICE_URL, e.g. "https://app.example.com/api/auth"); the redirect
	// goes to {SignInBase}/signin?callbackUrl=….
	SignInBase string
	// PublicOrigin is this backend's origin as the browser sees it, e.g.
	// "https://app.example.com". The callbackUrl is this origin plus the
	// request's path and query: never the Host header, which the client
	// chooses. latchkey accepts it only when it is latchkey's own origin or
	// listed in allowed_redirect_origins.
	PublicOrigin string
	// UnavailableStatus answers RequireUser's requests when latchkey could
	// not be asked: http.StatusServiceUnavailable (the default) or
	// http.StatusUnauthorized. Never the page itself: it fails closed.
	UnavailableStatus int
	// Logger reports failed lookups (at most one line a second, no cookie
	// in it). Default slog.Default().
	Logger *slog.Logger
}

// Middleware puts the session's user in each request's context.
type Middleware struct {
	resolver    Resolver
	redirect    bool
	signIn      string // {SignInBase}/signin
	origin      string
	unavailable int
	log         *slog.Logger
	lastLog     atomic.Int64 // unix seconds of the last failure logged
}

// New checks o and builds a Middleware resolving sessions with resolver
// (a [Remote] or a [Local]).
func New(resolver Resolver, o Options) (*Middleware, error) {
	if resolver == nil {
		return nil, errors.New("client: New needs a Resolver (NewRemote or NewLocal)")
	}
	m := &Middleware{resolver: resolver, redirect: o.Redirect, unavailable: o.UnavailableStatus, log: o.Logger}
	switch m.unavailable {
	case 0:
		m.unavailable = http.StatusServiceUnavailable
	case http.StatusServiceUnavailable, http.StatusUnauthorized:
	default:
		return nil, errors.New("client: Options.UnavailableStatus must be 503 or 401")
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	if o.Redirect {
		base, err := url.Parse(o.SignInBase)
		if err != nil || !isHTTP(base) || base.RawQuery != "" || base.Fragment != "" {
			return nil, errors.New("client: Options.SignInBase must be latchkey's absolute http(s) base URL")
		}
		origin, err := url.Parse(o.PublicOrigin)
		if err != nil || !isHTTP(origin) || strings.Trim(origin.Path, "/") != "" || origin.RawQuery != "" || origin.Fragment != "" {
			return nil, errors.New("client: Options.PublicOrigin must be an origin, e.g. https://app.example.com")
		}
		m.signIn = strings.TrimSuffix(base.String(), "/") + "/signin"
		m.origin = origin.Scheme + "://" + origin.Host
	}
	return m, nil
}

func isHTTP(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// Handler resolves the session of every request and calls next with the
// user in its context ([UserFrom]); requests without one are served too,
// as nobody (also when latchkey could not be asked).
func (m *Middleware) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, m.Resolve(r))
	})
}

// RequireUser is Handler that refuses requests without a user: 401, or a
// redirect to sign in (Options.Redirect), or Options.UnavailableStatus when
// latchkey could not be asked.
func (m *Middleware) RequireUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = m.Resolve(r)
		if _, ok := UserFrom(r.Context()); !ok {
			m.Refuse(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Resolve returns r with its session resolved into the context; a request
// already resolved (by an outer Handler) is returned as it is. For
// adapters to other routers (see echoauth).
func (m *Middleware) Resolve(r *http.Request) *http.Request {
	if _, done := resolutionFrom(r.Context()); done {
		return r
	}
	u, err := m.resolver.User(r)
	if err != nil {
		u = nil
		m.logFailure(r, err)
	}
	return withResolution(r, resolution{user: u, err: err})
}

// Refuse answers a resolved request that has no user, as RequireUser does.
func (m *Middleware) Refuse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if res, ok := resolutionFrom(r.Context()); ok && res.err != nil {
		http.Error(w, http.StatusText(m.unavailable), m.unavailable)
		return
	}
	if m.redirect && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		http.Redirect(w, r, m.signInURL(r), http.StatusFound)
		return
	}
	http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
}

// signInURL is latchkey's sign-in page with callbackUrl = the configured
// origin + this request's path and query. The path always starts with
// exactly one slash, so the callback cannot name another host.
func (m *Middleware) signInURL(r *http.Request) string {
	back := "/" + strings.TrimLeft(r.URL.EscapedPath(), "/")
	if r.URL.RawQuery != "" {
		back += "?" + r.URL.RawQuery
	}
	return m.signIn + "?callbackUrl=" + url.QueryEscape(m.origin+back)
}

// logFailure reports a failed lookup, at most once a second; a request
// whose client went away is no failure.
func (m *Middleware) logFailure(r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	now := time.Now().Unix()
	if last := m.lastLog.Load(); now > last && m.lastLog.CompareAndSwap(last, now) {
		m.log.Warn("latchkey session lookup failed; treating the request as signed out", "err", err)
	}
}
