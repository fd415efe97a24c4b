// Package echoauth adapts client.Middleware to Echo: the same resolution,
// the same answers, and the user in the request's context, where
// client.UserFrom (or UserFrom here) reads it.
package echoauth

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/client"
)

// Middleware resolves the session of every request and lets it through,
// signed in or not (see client.Middleware.Handler).
func Middleware(m *client.Middleware) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.SetRequest(m.Resolve(c.Request()))
			return next(c)
		}
	}
}

// RequireUser refuses requests without a user exactly as
// client.Middleware.RequireUser does: 401, a redirect to sign in, or the
// configured status when latchkey could not be asked.
func RequireUser(m *client.Middleware) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := m.Resolve(c.Request())
			c.SetRequest(r)
			if _, ok := client.UserFrom(r.Context()); !ok {
				m.Refuse(c.Response(), r)
				return nil
			}
			return next(c)
		}
	}
}

// UserFrom is client.UserFrom for an Echo context.
func UserFrom(c echo.Context) (client.User, bool) {
	return client.UserFrom(c.Request().Context())
}
