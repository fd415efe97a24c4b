package openidprovider

import (
	"fmt"
	"net/http"

	httphelper "github.com/zitadel/oidc/v3/pkg/http"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// answering is the OP as its authorization endpoint and callback see it:
// every answer they send a client's redirect URI — the code, and every
// error, in the query or the fragment — carries iss, the issuer exactly
// as discovery has it (RFC 9207), so that a client of several providers
// can tell which one answered and refuse a code a mix-up attacker routed
// to it. The library has no such option; its authorization answers all
// go through the Authorizer's Encoder, which this one extends. The rest
// of the OP is the library's as it is. Never hand it to the library as an
// op.Configuration: the library reads some of the provider's settings
// (discovery's scopes) only from an *op.Provider.
type answering struct {
	*op.Provider
	encoder issEncoder
}

func newAnswering(issuer string) *answering {
	return &answering{encoder: issEncoder{issuer: issuer}}
}

// use completes a with the provider once it is built (the provider's
// interceptors, intercept among them, are options it is built with).
func (a *answering) use(p *op.Provider) {
	a.Provider = p
	a.encoder.next = p.Encoder()
}

// Encoder implements op.Authorizer.
func (a *answering) Encoder() httphelper.Encoder { return a.encoder }

// intercept serves the authorization endpoint and its callback with a,
// inside the library's router (after its CORS and issuer interceptors),
// in place of the library's own handlers, which answer with the
// provider's encoder. It matches the path as sent, as the routers do:
// the decoded path would take another spelling of the callback's
// (/oidc/authorize%2Fcallback), which the app's router sends to the
// library's routes and not to getCallback, past the check that the code
// goes only to the browser that completed the request. And the callback
// is served only to a request getCallback checked (browserChecked): the
// check and the code are in two routers, and a spelling they part on
// (a trailing slash a middleware drops, a base path rewritten) is
// refused here, not let past the check.
func (a *answering) intercept(next http.Handler) http.Handler {
	authorize := "/" + endpoints["authorization"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.EscapedPath() {
		case authorize:
			op.Authorize(w, r, a)
		case callbackPath:
			if checked, _ := r.Context().Value(browserChecked{}).(bool); !checked {
				http.NotFound(w, r)
				return
			}
			op.AuthorizeCallback(w, r, a)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// browserChecked marks, in its context, a callback request whose browser
// getCallback found to be the one that completed the authorization
// request.
type browserChecked struct{}

// issEncoder encodes an authorization answer with the issuer added.
type issEncoder struct {
	next   httphelper.Encoder
	issuer string
}

func (e issEncoder) Encode(src any, dst map[string][]string) error {
	if err := e.next.Encode(src, dst); err != nil {
		return fmt.Errorf("encode authorization answer: %w", err)
	}
	dst["iss"] = []string{e.issuer}
	return nil
}
