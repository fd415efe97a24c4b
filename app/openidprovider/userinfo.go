package openidprovider

import (
	"io"
	"net/http"
)

// bearerErrors makes the library's refusals at the userinfo endpoint RFC
// 6750's (OpenID Connect Core §5.3.3): it answers an access token that is
// revoked, expired, of a deleted user or of an ended sign-in with 403 and
// an empty body, where a relying party expects 401 invalid_token with a
// WWW-Authenticate header — its cue to refresh or sign the user in again.
// Its other 401s (no token, a token it cannot open) get the header too.
func bearerErrors(next http.Handler, path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&bearerWriter{ResponseWriter: w}, r)
	})
}

// bearerWriter turns a 401 or 403 into RFC 6750's invalid_token and drops
// the body the library writes after it.
type bearerWriter struct {
	http.ResponseWriter
	refused bool
}

func (b *bearerWriter) WriteHeader(code int) {
	if code != http.StatusUnauthorized && code != http.StatusForbidden {
		b.ResponseWriter.WriteHeader(code)
		return
	}
	b.refused = true
	h := b.Header()
	h.Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	b.ResponseWriter.WriteHeader(http.StatusUnauthorized)
	_, _ = io.WriteString(b.ResponseWriter, `{"error":"invalid_token"}`)
}

func (b *bearerWriter) Write(p []byte) (int, error) {
	if b.refused {
		return len(p), nil
	}
	return b.ResponseWriter.Write(p)
}
