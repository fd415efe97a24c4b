package openidprovider

import (
	"errors"
	"io"
	"log/slog"
	"net/http"

	httphelper "github.com/zitadel/oidc/v3/pkg/http"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// refusals makes the library's refusals, and its answers' caching, what
// the RFCs say where the library does not:
//   - token, revocation, introspection (RFC 6749 §5): never cached
//     (Cache-Control: no-store, Pragma: no-cache; the library sets
//     neither, and a shared cache could keep tokens), and a failed client
//     authentication one answer, 401 invalid_client as JSON with a
//     WWW-Authenticate header naming Basic (§5.2). The library answered
//     it without the header, and at introspection as text carrying its
//     internal error, which told an unknown client id from a wrong secret.
//   - userinfo (RFC 6750, OpenID Connect Core §5.3.3): not cached
//     (personal data); an access token that is revoked, expired, of a
//     deleted user or of an ended sign-in, which the library answers 403
//     with an empty body, is 401 invalid_token with a WWW-Authenticate
//     header, a relying party's cue to refresh or sign the user in again;
//     its other 401s (no token, one it cannot open) get the header too.
//   - end_session, a browser's endpoint: an unknown client_id is a 400
//     like its other refusals, not the token endpoint's 401; and a query
//     or form that does not decode (a bad %-escape) is a 400
//     invalid_request, which the library answered 500 without a log line.
func refusals(next http.Handler, realm string) http.Handler {
	endSession := "/" + endpoints["end_session"]
	client := refusal{status: http.StatusUnauthorized, body: invalidClient, challenge: `Basic realm="` + realm + `"`, noStore: true}
	byPath := map[string]refusal{
		"/" + endpoints["token"]:         client,
		"/" + endpoints["revocation"]:    client,
		"/" + endpoints["introspection"]: client,
		"/" + endpoints["userinfo"]: {status: http.StatusUnauthorized, body: invalidToken, challenge: `Bearer error="invalid_token"`,
			noStore: true, forbidden: true},
		"/" + endpoints["end_session"]: {status: http.StatusBadRequest, body: unknownClient},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == endSession {
			if err := r.ParseForm(); err != nil {
				op.RequestError(w, r, oidc.ErrInvalidRequest().WithDescription("malformed request").WithParent(err), nil)
				return
			}
		}
		ref, ok := byPath[r.URL.Path]
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if ref.noStore {
			h := w.Header()
			h.Set("Cache-Control", "no-store")
			h.Set("Pragma", "no-cache")
		}
		next.ServeHTTP(&refusingWriter{ResponseWriter: w, refusal: ref}, r)
	})
}

// The bodies of the refusals.
const (
	invalidClient = `{"error":"invalid_client","error_description":"client authentication failed"}`
	invalidToken  = `{"error":"invalid_token"}`
	unknownClient = `{"error":"invalid_request","error_description":"unknown client"}`
)

// refusal is what the library's 401 (and 403, when forbidden) becomes at
// an endpoint: status, JSON body and WWW-Authenticate challenge ("":
// none); noStore marks the endpoint's answers not to be cached.
type refusal struct {
	status             int
	body, challenge    string
	noStore, forbidden bool
}

// refusingWriter writes the refusal in place of the library's and drops
// the body the library writes after it.
type refusingWriter struct {
	http.ResponseWriter
	refusal
	refused bool
}

func (w *refusingWriter) WriteHeader(code int) {
	if code != http.StatusUnauthorized && !(w.forbidden && code == http.StatusForbidden) {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.refused = true
	h := w.Header()
	if w.challenge != "" {
		h.Set("WWW-Authenticate", w.challenge)
	}
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = io.WriteString(w.ResponseWriter, w.body)
}

func (w *refusingWriter) Write(p []byte) (int, error) {
	if w.refused {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// malformedAuthorize is the body of an authorization request whose
// parameters do not decode, the provider's other malformed requests'
// plain notice.
const malformedAuthorize = "malformed request: a parameter is not valid"

// parsedAuthorize refuses an authorization request whose parameters do
// not decode (max_age not a number, a bad %-escape) before the library
// sees it: with no request to answer through yet, the library wrote its
// whole internal error as the 400's body ("ErrorType=… Parent=schema:
// …") and logged it through slog's default logger. Here the body is a
// short notice and the detail is logged once, through the app's logger.
// The library decodes the parameters again, as parsed here.
func parsedAuthorize(next http.Handler, decoder httphelper.Decoder, log *slog.Logger) http.Handler {
	authorize := "/" + endpoints["authorization"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != authorize {
			next.ServeHTTP(w, r)
			return
		}
		if _, err := op.ParseAuthorizeRequest(r, decoder); err != nil {
			var oe *oidc.Error
			if errors.As(err, &oe) && oe.Parent != nil {
				err = oe.Parent
			}
			log.WarnContext(r.Context(), "openid: authorization request does not parse", "err", err)
			http.Error(w, malformedAuthorize, http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}
