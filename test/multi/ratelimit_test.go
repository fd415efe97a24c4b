package multi_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Three processes on one database share the e-mail rate limits: thirty
// requests for one address, spread over all three at once from one client,
// deliver exactly per_address mails; per-process counters would let each
// instance send its own allowance.
func TestRateLimitsHoldAcrossInstances(t *testing.T) {
	const perAddress, requests = 3, 30
	c := startCluster(t, clusterOpts{instances: 3, rateLimit: "      per_address: 3\n      per_ip: 100\n"})
	addr := "limited@example.com"

	var wg sync.WaitGroup
	start := make(chan struct{})
	answers := make([]string, requests)
	for i := range requests {
		in, br := c.nodes[i%len(c.nodes)], c.browser()
		csrf := br.csrf(in)
		wg.Go(func() {
			<-start
			r := br.post(in.url("/signin/email"), url.Values{"csrfToken": {csrf}, "email": {addr}})
			if r.StatusCode != http.StatusFound {
				t.Errorf("request %d: %d %s", i, r.StatusCode, r.body)
			}
			answers[i] = r.location()
		})
	}
	close(start)
	wg.Wait()

	sent, refused := 0, 0
	for _, loc := range answers {
		switch loc {
		case c.publicURL("/verify-request?provider=email&type=email"):
			sent++
		case c.publicURL("/error?error=EmailSignin"):
			refused++
		default:
			t.Fatalf("unexpected answer %q", loc)
		}
	}
	require.Equal(t, perAddress, sent, "the three instances together send one allowance")
	require.Equal(t, requests-perAddress, refused)
	mails := 0
	for _, m := range c.smtp.Mails() {
		if len(m.To) == 1 && m.To[0] == addr {
			mails++
		}
	}
	require.Equal(t, perAddress, mails, "what the SMTP server really received")
}
