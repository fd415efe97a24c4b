package app_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics/metricstest"
	"github.com/latchkey-auth/latchkey/app/password"
)

// Issue 26, L1: guesses spread over the /64s of one IPv6 /48, or the
// addresses of one IPv4 /24, each /64 or address a fresh client and each
// guess a fresh account, are throttled by the network's own tier (50
// free failures): past it even the right password is refused from a new
// client of that network, while another network, and a client the
// account signed in from before, are not held up.
func TestPasswordThrottleNetworks(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startPw(t, envOpts{postgres: pg, config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }})
		e.addPasswordUser("alice@example.com", goodPassword, true)
		from := func(ip, addr, pw string) int {
			return e.passwordSignIn(e.browser(), addr, pw, "X-Forwarded-For", ip).StatusCode
		}
		for _, n := range []struct {
			name, known, fresh, other string
			client                    func(i int) string
		}{
			{"IPv6 /48", "2001:db8:1:aaaa::1", "2001:db8:1:ffff::1", "2001:db8:2::1", func(i int) string { return fmt.Sprintf("2001:db8:1:%x::1", i) }},
			{"IPv4 /24", "192.0.2.250", "192.0.2.251", "198.51.100.1", func(i int) string { return fmt.Sprintf("192.0.2.%d", i+1) }},
		} {
			require.Equal(t, http.StatusOK, from(n.known, "alice@example.com", goodPassword), n.name)
			for i := range 51 {
				require.Equal(t, http.StatusUnauthorized, from(n.client(i), fmt.Sprintf("guess%d@example.com", i), "wrong password"))
			}
			require.Equal(t, http.StatusUnauthorized, from(n.fresh, "alice@example.com", goodPassword),
				"%s: 51 failures from the network block its new clients", n.name)
			require.Contains(t, e.logs.String(), "too many failed password sign-ins: "+n.name+" blocked")
			require.Equal(t, http.StatusOK, from(n.other, "alice@example.com", goodPassword), "%s: another network", n.name)
			require.Equal(t, http.StatusOK, from(n.known, "alice@example.com", goodPassword), "%s: a known client", n.name)
		}
	})
}

// busyHasher is a password hasher with a single slot that gives up
// waiting for it after 50 ms (app.Options.PasswordHasher).
func busyHasher() *password.Hasher { return password.Default().Limit(1, 50*time.Millisecond) }

// holdSlot takes h's slot with the check of a hash made with costly
// parameters (16 MiB × 64 passes: a third of a second on a fast machine,
// seconds on a busy one), and returns a wait for its end.
func holdSlot(t testing.TB, h *password.Hasher) (wait func()) {
	b64 := base64.RawStdEncoding
	heavy := "$argon2id$v=19$m=16384,t=64,p=1$" + b64.EncodeToString([]byte("0123456789abcdef")) + "$" +
		b64.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	done := make(chan error, 1)
	go func() {
		_, _, err := h.Verify(heavy, "anything")
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // the check has its slot
	return func() { require.NoError(t, <-done) }
}

// Issue 26, L1: when every hashing slot stays taken, a password sign-in is
// answered TryLater, 503, not CredentialsSignin as a wrong password is: in
// JSON mode {url: …/error?error=TryLater&provider=…}, in form mode a
// redirect there that lands on the sign-in page with "Too many requests
// right now". The attempt counts no failure.
func TestPasswordSignInBusy(t *testing.T) {
	h := busyHasher()
	e := startPw(t, envOpts{hasher: h, config: func(c *config.Config) { c.Metrics.Listen = "127.0.0.1:0" }})
	e.addPasswordUser("alice@example.com", goodPassword, true)
	jsonMode, formMode := noRedirects(e.browser()), noRedirects(e.browser())
	jsonForm := url.Values{"email": {"alice@example.com"}, "password": {goodPassword}, "csrfToken": {e.csrf(jsonMode)}, "json": {"true"}}
	form := url.Values{"email": {"alice@example.com"}, "password": {goodPassword}, "csrfToken": {e.csrf(formMode)}}

	wait := holdSlot(t, h)
	busyJSON := e.post(jsonMode, "/callback/credentials", jsonForm)
	busyForm := e.post(formMode, "/callback/credentials", form)
	wait()

	busy := e.base + "/error?error=TryLater&provider=credentials"
	require.Equal(t, http.StatusServiceUnavailable, busyJSON.StatusCode, busyJSON.body)
	require.JSONEq(t, `{"url":"`+busy+`"}`, busyJSON.body)
	require.Equal(t, http.StatusFound, busyForm.StatusCode)
	require.Equal(t, busy, busyForm.location())
	page := e.get(e.browser(), busy)
	require.Equal(t, http.StatusFound, page.StatusCode)
	require.Equal(t, e.base+"/signin?error=TryLater", page.location(), "shown on the sign-in page, as CredentialsSignin")
	page = e.get(e.browser(), page.location())
	require.Equal(t, http.StatusOK, page.StatusCode)
	require.Contains(t, page.body, "Too many requests right now. Please try again in a moment.")
	require.NotContains(t, page.body, "Sign in failed")
	require.Contains(t, e.logs.String(), "too many password checks in progress")
	require.Empty(t, e.session(jsonMode))

	wrong := e.passwordSignIn(e.browser(), "alice@example.com", "wrong password")
	require.Equal(t, http.StatusUnauthorized, wrong.StatusCode)
	require.JSONEq(t, `{"url":"`+e.base+`/error?error=CredentialsSignin&provider=credentials"}`, wrong.body)
	for range 4 { // the busy attempts counted no failure: 5 free ones for the pair
		e.passwordSignIn(e.browser(), "alice@example.com", "wrong password")
	}
	require.Equal(t, http.StatusOK, e.passwordSignIn(e.browser(), "alice@example.com", goodPassword).StatusCode)

	rec := httptest.NewRecorder()
	e.app.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	s := metricstest.Parse(t, bytes.NewReader(rec.Body.Bytes()))
	require.Equal(t, 2.0, s.Value("latchkey_signins_total", "provider", "credentials", "outcome", "TryLater"))
}
