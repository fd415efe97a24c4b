package web

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
)

// protocolNotText is RFC 6749 §5.2's error for a back-channel call (a
// POST: token, revocation, introspection) with a parameter that is not
// text.
var protocolNotText = map[string]string{"error": "invalid_request", "error_description": "a parameter is not valid UTF-8 text"}

// Protocol is h, a protocol library's handler, behind what request init
// does for the kit's own routes: the body is read whole, at most
// server.max_body_bytes (413 past it, as everywhere: the library reads
// any size, and an authorization request's state and nonce are stored),
// and a query, form or client credential that is not text (IsText) is
// refused before h sees it — RFC 6749's JSON invalid_request to a POST
// (the back-channel calls), a plain 400 to a browser's GET. Nothing it
// refuses echoes the value back, or reaches the database.
func (k *Kit) Protocol(h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		text := r.URL.RawQuery == "" || allTextQuery(r.URL.RawQuery)
		if r.Body != nil && r.Body != http.NoBody {
			body, err := k.readBody(c.Response(), r)
			if err != nil {
				return err
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if ct, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType)); ct == echo.MIMEApplicationForm {
				text = text && allTextQuery(string(body))
			}
		}
		if id, secret, ok := r.BasicAuth(); ok {
			text = text && IsText(id) && IsText(secret) && allTextQuery(id) && allTextQuery(secret)
		}
		if text {
			h.ServeHTTP(c.Response(), r)
			return nil
		}
		if r.Method == http.MethodPost {
			NoStore(c)
			return c.JSON(http.StatusBadRequest, protocolNotText)
		}
		return errNotText
	}
}

// allTextQuery reports whether the names and values of a URL-encoded
// query or form are text once decoded; one that does not decode is left
// to the handler, which refuses it in its own words.
func allTextQuery(raw string) bool {
	v, _ := url.ParseQuery(raw)
	return AllText(v)
}
