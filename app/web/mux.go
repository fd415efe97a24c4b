package web

import "github.com/labstack/echo/v4"

// Mux is the route table a feature handler mounts its routes on (its
// Mount method). The app implements it (app/routes.go): there every route
// is tagged with its pattern for the access log and the metrics, and
// wrapped in panic recovery, once, when it is registered.
type Mux interface {
	// Get mounts a GET route below the base path that runs no request
	// init: no CSRF or callback-url cookie (static files, documents).
	Get(path string, h echo.HandlerFunc)
	// RootGet mounts GET and HEAD at path at the root of the listener,
	// outside the base path (health checks).
	RootGet(path string, h echo.HandlerFunc)
	// RootAny mounts every method at path at the root of the listener
	// (forward-auth: proxies may ask with the original request's method).
	// Nothing posted to it is read, so no CSRF rule applies; its answers
	// have no body, so they carry no Content-Security-Policy.
	RootAny(path string, h echo.HandlerFunc)
}
