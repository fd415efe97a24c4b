package openidprovider

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// honestDiscovery corrects the library's discovery document where it
// claims more than latchkey does: the library lists the implicit response
// types and grant, the JWT bearer grant and a device authorization
// endpoint whatever the provider supports, and a relying party that
// believes it picks a flow latchkey refuses. latchkey does the
// authorization code flow (with refresh tokens) only.
func honestDiscovery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &bufferWriter{header: http.Header{}, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		body := rec.buf.Bytes()
		var doc map[string]any
		if rec.code == http.StatusOK && json.Unmarshal(body, &doc) == nil {
			doc["response_types_supported"] = []string{"code"}
			doc["grant_types_supported"] = []string{"authorization_code", "refresh_token"}
			delete(doc, "device_authorization_endpoint")
			if b, err := json.Marshal(doc); err == nil {
				body = b
			}
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.code)
		_, _ = w.Write(body)
	})
}

// bufferWriter keeps a response to rewrite it.
type bufferWriter struct {
	header http.Header
	code   int
	buf    bytes.Buffer
}

func (b *bufferWriter) Header() http.Header         { return b.header }
func (b *bufferWriter) WriteHeader(code int)        { b.code = code }
func (b *bufferWriter) Write(p []byte) (int, error) { return b.buf.Write(p) }
