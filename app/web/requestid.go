package web

import "github.com/labstack/echo/v4"

// RequestID is the request's id (X-Request-Id), for log lines: the app's
// response writer knows it; "" when there is none (a test's bare context).
func RequestID(c echo.Context) string {
	if x, ok := c.Response().Writer.(interface{ RequestID() string }); ok {
		return x.RequestID()
	}
	return ""
}
