package app_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkGetSessionNoCookie is a first visit: GET /session without any
// cookie, answered with {} and next-auth's two Set-Cookie lines (a new CSRF
// token, the callback URL), the no-store headers and the security headers.
func BenchmarkGetSessionNoCookie(b *testing.B) {
	e := startEnv(b, envOpts{})
	benchGet(b, e.app.Handler(), e.path+"/session", "", func(rec *httptest.ResponseRecorder) bool {
		return rec.Code == http.StatusOK && rec.Body.String() == "{}" && len(rec.Header()["Set-Cookie"]) == 2
	})
}
