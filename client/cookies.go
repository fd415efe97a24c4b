package client

import (
	"net/http"
	"strings"

	"github.com/latchkey-auth/latchkey/app/cookies"
)

// DefaultCookieNames returns the session cookie names latchkey may use:
// next-auth v4 and Auth.js v5 styles, over https and http. Only these
// cookies (and their chunks) are ever sent to latchkey or decrypted.
func DefaultCookieNames() []string {
	return []string{
		"__Secure-next-auth.session-token",
		"next-auth.session-token",
		"__Secure-authjs.session-token",
		"authjs.session-token",
	}
}

// maxCookieBytes bounds what one request can make us forward or hash. Real
// sessions are a few hundred bytes to a few KiB.
const maxCookieBytes = 64 << 10

// isSessionCookie tells whether cookie is one of names or one of their
// chunks, as latchkey reads them.
func isSessionCookie(cookie string, names []string) bool {
	for _, name := range names {
		if cookies.IsChunked(cookie, name) {
			return true
		}
	}
	return false
}

// sessionCookieHeader is the Cookie header to send to latchkey: only the
// request's session cookies and their chunks, in request order. "" when
// there are none, or when they are larger than any real session.
func sessionCookieHeader(r *http.Request, names []string) string {
	var b strings.Builder
	for _, c := range r.Cookies() {
		if !isSessionCookie(c.Name, names) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.Name)
		b.WriteByte('=')
		b.WriteString(c.Value)
		if b.Len() > maxCookieBytes {
			return ""
		}
	}
	return b.String()
}
