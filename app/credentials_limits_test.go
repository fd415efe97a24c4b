package app_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
)

// Issue 26, L1: guesses spread over the /64s of one IPv6 /48, or the
// addresses of one IPv4 /24, each /64 or address a fresh client and each
// guess a fresh account, are throttled by the network's own tier (100
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
			for i := range 101 {
				require.Equal(t, http.StatusUnauthorized, from(n.client(i), fmt.Sprintf("guess%d@example.com", i), "wrong password"))
			}
			require.Equal(t, http.StatusUnauthorized, from(n.fresh, "alice@example.com", goodPassword),
				"%s: 101 failures from the network block its new clients", n.name)
			require.Contains(t, e.logs.String(), "too many failed password sign-ins: "+n.name+" blocked")
			require.Equal(t, http.StatusOK, from(n.other, "alice@example.com", goodPassword), "%s: another network", n.name)
			require.Equal(t, http.StatusOK, from(n.known, "alice@example.com", goodPassword), "%s: a known client", n.name)
		}
	})
}

// Issue 26, L1: when every hashing slot stays taken (here: two slots, held
// by checks of a stored hash made with costly parameters), a sign-in is
// answered TryLater, 503, not CredentialsSignin as a wrong password is: in
// JSON mode {url: …/error?error=TryLater}, in form mode a redirect there
// that lands on the sign-in page with "Too many requests right now".
func TestPasswordSignInBusy(t *testing.T) {
	procs := runtime.GOMAXPROCS(1) // two hashing slots (2 × GOMAXPROCS when the app is built)
	e := startPw(t, envOpts{})
	runtime.GOMAXPROCS(procs)
	slow := "slow@example.com"
	now := e.now()
	b64 := base64.RawStdEncoding
	// A hash that costs seconds to check (32 MiB × 64 passes); its key matches nothing.
	heavy := "$argon2id$v=19$m=32768,t=64,p=1$" + b64.EncodeToString([]byte("0123456789abcdef")) + "$" +
		b64.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, e.app.Store().CreateUserWithPassword(t.Context(), &models.User{Email: &slow, EmailVerified: &now}, heavy))

	type attempt struct {
		c    *http.Client
		form url.Values
	}
	prepare := func(addr string, json bool) attempt {
		c := noRedirects(e.browser())
		f := url.Values{"email": {addr}, "password": {"wrong password"}, "csrfToken": {e.csrf(c)}, "callbackUrl": {e.origin + "/home"}}
		if json {
			f.Set("json", "true")
		}
		return attempt{c, f}
	}
	holders := []attempt{prepare(slow, true), prepare(slow, true)}
	waiters := []attempt{prepare("alice@example.com", true), prepare("alice@example.com", false)}
	results := make([]resp, 4)
	var wg sync.WaitGroup
	for i, a := range append(holders, waiters...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i >= 2 {
				<-time.After(300 * time.Millisecond) // the holders have their slots
			}
			results[i] = e.post(a.c, "/callback/credentials", a.form)
		}()
	}
	wg.Wait()

	wrong := `{"url":"` + e.base + `/error?error=CredentialsSignin&provider=credentials"}`
	for _, r := range results[:2] {
		require.Equal(t, http.StatusUnauthorized, r.StatusCode, "a wrong password, checked")
		require.JSONEq(t, wrong, r.body)
	}
	busy := e.base + "/error?error=TryLater&provider=credentials"
	require.Equal(t, http.StatusServiceUnavailable, results[2].StatusCode, results[2].body)
	require.JSONEq(t, `{"url":"`+busy+`"}`, results[2].body)
	require.Equal(t, http.StatusFound, results[3].StatusCode)
	require.Equal(t, busy, results[3].location())
	page := e.get(e.browser(), busy)
	require.Equal(t, http.StatusOK, page.StatusCode)
	require.Contains(t, page.body, "Too many requests right now. Please try again in a moment.")
	require.NotContains(t, page.body, "Sign in failed")
	require.Contains(t, e.logs.String(), "too many password checks in progress")
}
