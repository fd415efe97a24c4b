package oauth

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// maxAnswerBytes bounds every answer read from an identity provider
// (discovery, keys, token, userinfo, a catalogue profile): go-oidc and
// goth read bodies whole, so an IdP that answers without end would
// otherwise fill the memory within the client's timeout. 1 MiB is what
// golang.org/x/oauth2 allows a token response, and far above any real
// answer of the others.
const maxAnswerBytes = 1 << 20

// bounded returns a copy of hc whose response bodies fail once they pass
// maxAnswerBytes, and which follows no redirect of a POST.
func bounded(hc *http.Client) *http.Client {
	c := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = boundedTransport{base: base}
	c.CheckRedirect = postsStay(hc.CheckRedirect)
	return &c
}

// postsStay refuses to follow a redirect of a POST (the token endpoint's):
// Go re-sends a 307's or 308's body to wherever Location points, and that
// body holds the code, the PKCE verifier and, with client_secret_post,
// the client's secret. The 3xx is the answer instead, and the exchange
// fails, as openid-client's (next-auth's) does. GETs (discovery, keys,
// userinfo) follow as before; Go drops their Authorization header on the
// way to another host.
func postsStay(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if m := via[0].Method; m != http.MethodGet && m != http.MethodHead {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 { // net/http's own rule when CheckRedirect is nil
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

type boundedTransport struct{ base http.RoundTripper }

func (t boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	// Named without its query, which some providers' profile URLs use for
	// the access token.
	where := r.URL.Scheme + "://" + r.URL.Host + r.URL.Path
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxAnswerBytes, url: where}
	return resp, nil
}

// boundedBody reads at most left bytes, then fails instead of truncating,
// so the caller reports an oversized answer rather than bad JSON.
type boundedBody struct {
	io.ReadCloser
	left int64
	url  string
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := b.ReadCloser.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("answer from %s is over %d bytes", b.url, maxAnswerBytes)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
