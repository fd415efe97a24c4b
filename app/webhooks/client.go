package webhooks

import (
	"net/http"
	"time"
)

// clients are the HTTP clients of the three dial policies. Connections are
// pooled per client, so a connection opened for an endpoint allowed to
// reach private addresses is never reused for one that is not.
type clients struct {
	strict, loopback, private *http.Client
}

func newClients(resolve Resolver, timeout time.Duration) clients {
	return clients{
		strict:   newClient(newDialer(policy{}, resolve, timeout)),
		loopback: newClient(newDialer(policy{loopback: true}, resolve, timeout)),
		private:  newClient(newDialer(policy{loopback: true, private: true}, resolve, timeout)),
	}
}

// newClient is a client that dials through d, uses no proxy (a proxy
// would dial for us, past d's check) and follows no redirect: a 3xx is
// the receiver's answer (a failure), since following it could lead
// anywhere.
func newClient(d *dialer) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// forEndpoint picks the client an endpoint's URL host and AllowPrivate allow.
func (c clients) forEndpoint(host string, allowPrivate bool) *http.Client {
	switch {
	case allowPrivate:
		return c.private
	case IsLoopbackHost(host):
		return c.loopback
	}
	return c.strict
}
