package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/models/throttlestore"
)

// Wrong passwords sent all at once are throttled as if sent one by one:
// each attempt is counted before its password is checked, and of those
// past the free failures only the one that claims the block goes on. So
// 40 parallel guesses for one account from one client get at most the 5
// free ones and 1 more checked; the refused ones count nothing, and the
// right password is refused while the block lasts.
func TestPasswordThrottleHoldsUnderParallelGuesses(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startPw(t, envOpts{postgres: pg, config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }})
		e.addPasswordUser("alice@example.com", goodPassword, true)
		const n = 40
		// Each browser first fetches its CSRF token, so that the posts go together.
		type attempt struct {
			c    *http.Client
			form map[string][]string
		}
		var attempts []attempt
		for range n {
			c := e.browser()
			attempts = append(attempts, attempt{c, map[string][]string{"email": {"alice@example.com"}, "password": {"wrong password"},
				"csrfToken": {e.csrf(c)}, "json": {"true"}}})
		}
		var wg sync.WaitGroup
		statuses := make([]int, n)
		start := make(chan struct{})
		for i, a := range attempts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i] = e.post(a.c, "/callback/credentials", a.form, "X-Forwarded-For", "203.0.113.7").StatusCode
			}()
		}
		close(start)
		wg.Wait()
		for i, s := range statuses {
			require.Equal(t, http.StatusUnauthorized, s, "attempt %d", i)
		}
		rows, err := throttlestore.New(e.app.Store()).PasswordThrottles(context.Background(), e.now(), pairBucket(t, e))
		require.NoError(t, err)
		var counted int
		for _, r := range rows {
			counted = r.Failures
		}
		require.LessOrEqual(t, counted, 6, "failures counted for the pair: only attempts whose password was checked")
		require.GreaterOrEqual(t, counted, 6, "the free five and the one that claimed the block")
		require.Contains(t, e.logs.String(), "too many failed password sign-ins")
		require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(e.browser(), "alice@example.com", goodPassword, "X-Forwarded-For", "203.0.113.7").StatusCode,
			"blocked: even the right password is refused")
	})
}

// pairBucket is the throttle's bucket for alice@example.com from
// 203.0.113.7 (app/signin's throttleBucket: the format is pinned here).
func pairBucket(t *testing.T, _ *env) string {
	t.Helper()
	h := sha256.New()
	h.Write([]byte("latchkey password throttle v1\x00"))
	for _, p := range []string{"alice@example.com", email.ClientKey("203.0.113.7")} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "pw:pair:" + hex.EncodeToString(h.Sum(nil))
}
