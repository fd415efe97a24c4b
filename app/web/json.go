package web

import "github.com/labstack/echo/v4"

// jsonContentType is the Content-Type value echo's c.JSON sets, as a
// shared slice (HeaderValue says why nothing writes into it).
var jsonContentType = HeaderValue(echo.MIMEApplicationJSON)

// SendJSON answers status with body, a complete JSON document, as
// c.JSONBlob does, without its per-answer header slice.
func SendJSON(c echo.Context, status int, body []byte) error {
	res := c.Response()
	h := res.Header()
	if v := h["Content-Type"]; len(v) == 0 || v[0] == "" {
		h["Content-Type"] = jsonContentType
	}
	res.WriteHeader(status)
	_, err := res.Write(body)
	return err
}
