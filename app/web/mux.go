package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Mux is the route table a feature handler mounts its routes on (its
// Mount method). The app implements it (app/routes.go): there every route
// is tagged with its pattern for the access log and the metrics, and
// wrapped in panic recovery, once, when it is registered. Paths of Get,
// Page and Post are below the base path; Root ones at the listener's root.
type Mux interface {
	// Get mounts a GET route that runs no request init: no CSRF or
	// callback-url cookie (GET /providers, static files, documents).
	Get(path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc)
	// Page mounts a GET route after next-auth's request init
	// (Kit.WithRequest): pages and the JSON routes that set its cookies.
	Page(path string, h Action, mw ...echo.MiddlewareFunc)
	// Post mounts a POST route: h runs when the posted csrfToken matches
	// the cookie, onMismatch otherwise (Kit.WithCSRF). Every POST names its
	// CSRF rule: the app refuses to start with one that has none.
	Post(path string, h, onMismatch Action, mw ...echo.MiddlewareFunc)
	// PostWithoutCSRF mounts a POST route with no CSRF rule, for a route
	// that reads nothing and changes nothing (the v4 client's log beacon).
	PostWithoutCSRF(path string, h echo.HandlerFunc)
	// RootGet mounts GET and HEAD at path at the root of the listener,
	// outside the base path (health checks).
	RootGet(path string, h echo.HandlerFunc)
	// RootAny mounts every method at path at the root of the listener
	// (forward-auth: proxies may ask with the original request's method).
	// Nothing posted to it is read, so no CSRF rule applies; its answers
	// have no body, so they carry no Content-Security-Policy.
	RootAny(path string, h echo.HandlerFunc)
	// Protocol mounts every method at path under the base path for a
	// protocol handler that authenticates its callers itself (the OpenID
	// Provider's endpoints: client credentials, PKCE, bearer tokens), so
	// no CSRF rule applies; OPTIONS reaches it too (CORS preflight).
	Protocol(path string, h http.Handler)
}
