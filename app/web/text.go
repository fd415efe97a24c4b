package web

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// errNotText refuses a request with a form or query value (or name) that is
// not text, before any handler runs (WithRequest).
var errNotText = echo.NewHTTPError(http.StatusBadRequest, "malformed request: a value is not valid UTF-8 text")

// IsText reports whether s is text every store keeps as it is: valid
// UTF-8 without a NUL byte. PostgreSQL refuses anything else in a text
// column (SQLSTATE 22021) where SQLite stores it, so such a value is
// refused where it comes in (WithRequest, the app's Protocol routes)
// rather than becoming a database error deep in a handler: a 500, an
// ERROR line and, in the library's answers, the SQL error's words.
func IsText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// AllText reports whether every name and value of v is text (IsText).
func AllText(v url.Values) bool {
	for key, vs := range v {
		if !IsText(key) {
			return false
		}
		for _, s := range vs {
			if !IsText(s) {
				return false
			}
		}
	}
	return true
}

// textRequest reports whether rq's form and c's query are all text. A
// request without a query (GET /session on every page load) costs a
// comparison.
func textRequest(c echo.Context, rq *Request) bool {
	if !AllText(rq.Form) {
		return false
	}
	return c.Request().URL.RawQuery == "" || AllText(c.QueryParams())
}
