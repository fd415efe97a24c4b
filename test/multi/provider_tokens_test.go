package multi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/test/refreshidp"
)

// tokensSecret is tokens.client_secret: the app's backend's bearer token.
const tokensSecret = "multi-tokens-secret-0123456789abcdef"

// Issue #35's promise across processes: when a provider access token has
// expired, 50 concurrent GET /token/idp split over two instances on one
// PostgreSQL database cause exactly one call to the provider's token
// endpoint (whose refresh tokens are single-use: a second refresh would
// be invalid_grant and revoke the grant), and all 50 answers carry the
// token that call issued. No token is in the database in the clear.
func TestProviderTokenRefreshOnce(t *testing.T) {
	idp := refreshidp.New(2 * time.Second)
	c := startCluster(t, clusterOpts{
		idpProvider: "    store_tokens: true\n",
		idpWrap:     idp.Middleware,
		extraConfig: "tokens:\n  client_secret: " + tokensSecret + "\n  refresh_skew: 0s\n",
	})
	a, b := c.nodes[0], c.nodes[1]
	c.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-tok", Email: "tok@example.com", EmailVerified: true, PreferredUsername: "tok"})
	br := c.browser()
	r := br.post(a.url("/signin/idp"), url.Values{"csrfToken": {br.csrf(a)}, "callbackUrl": {c.origin() + "/app"}})
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	r = br.get(r.location())
	require.Equal(t, http.StatusFound, r.StatusCode, r.body)
	r = br.get(c.at(b, r.location()))
	require.Equal(t, c.origin()+"/app", r.location())

	get := func(in *instance) (resp, error) {
		req, err := http.NewRequest(http.MethodGet, in.url("/token/idp"), nil)
		if err != nil {
			return resp{}, err
		}
		req.Header.Set("Authorization", "Bearer "+tokensSecret)
		return br.do(req)
	}
	r, err := get(a)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.StatusCode, r.body)
	first := jsonField(r.body, "access_token")
	require.Zero(t, idp.Refreshes(), "fresh: handed out as kept")

	time.Sleep(2100 * time.Millisecond) // the token expires (refresh_skew 0s)
	idp.SetAccessTTL(time.Hour)
	idp.SetDelay(300 * time.Millisecond) // the refresh is slow: the others wait for it
	got := make([]string, 50)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := a
			if i%2 == 1 {
				in = b
			}
			r, err := get(in)
			switch {
			case err != nil:
				got[i] = err.Error()
			case r.StatusCode != http.StatusOK:
				got[i] = r.Status + " " + r.body
			default:
				got[i] = jsonField(r.body, "access_token")
			}
		}()
	}
	wg.Wait()
	t.Logf("50 concurrent GET /token/idp over two instances, the IdP answering its refresh in 300 ms: all answered in %s", time.Since(start).Round(time.Millisecond))
	require.EqualValues(t, 1, idp.Refreshes(), "one call to the provider for 50 requests on two instances")
	issued := idp.Issued()
	require.Len(t, issued, 1)
	for i, g := range got {
		require.Equal(t, issued[0], g, "answer %d", i)
	}

	// The rows hold the sealed tokens only.
	rows, err := c.sql().Query("SELECT CAST(a AS text) FROM accounts a")
	require.NoError(t, err)
	var all []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		all = append(all, s)
	}
	require.NoError(t, rows.Err())
	text := strings.Join(all, "\n")
	require.Contains(t, text, "lk1:")
	for _, secret := range append(idp.Secrets(), first) {
		require.False(t, strings.Contains(text, secret), "a provider token in the clear in accounts")
		require.False(t, strings.Contains(a.logs.String()+b.logs.String(), secret), "a provider token in the logs")
	}
}

// jsonField is one string field of a JSON object; the body itself when
// it is none (which the test's comparison then shows). Safe on any
// goroutine.
func jsonField(body, field string) string {
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) != nil {
		return body
	}
	v, ok := m[field].(string)
	if !ok {
		return body
	}
	return v
}
