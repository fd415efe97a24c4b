package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// Wrong codes fired at once from many pending sign-ins, on PostgreSQL:
// only the 5 free ones are checked (each counted before it is checked),
// the rest are refused unchecked with TwoFactorThrottled (429).
func TestTwoFactorBackoffHoldsUnderARace(t *testing.T) {
	e := startTwoFactor(t, backend{strategy: config.StrategyDatabase, postgres: true}, nil)
	e.addPasswordUser("ada@example.com", goodPassword, true)
	owner := e.browser()
	e.passwordSignIn(owner, "ada@example.com", goodPassword)
	e.enrol(owner)

	var browsers []*http.Client
	for range 20 {
		c := e.browser()
		e.requireHeld(c, e.passwordSignIn(c, "ada@example.com", goodPassword), "TwoFactorRequired")
		e.csrf(c)
		browsers = append(browsers, c)
	}
	var invalid, throttled, other atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, c := range browsers {
		for range 3 {
			wg.Go(func() {
				<-start
				form := url.Values{"code": {"000000"}, "csrfToken": {e.csrf(c)}, "json": {"true"}}
				req, _ := http.NewRequest(http.MethodPost, e.url("/callback/two-factor"), strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				res, err := c.Do(req)
				if err != nil {
					other.Add(1)
					return
				}
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusUnauthorized:
					invalid.Add(1)
				case http.StatusTooManyRequests:
					throttled.Add(1)
				default:
					other.Add(1)
				}
			})
		}
	}
	close(start)
	wg.Wait()
	row, err := twofactorstore.New(e.app.Store()).TwoFactorOf(context.Background(), e.userID("ada@example.com"))
	require.NoError(t, err)
	require.Equal(t, 5, row.Failures, "codes checked")
	require.EqualValues(t, 5, invalid.Load(), "TwoFactorInvalid")
	require.EqualValues(t, 55, throttled.Load(), "TwoFactorThrottled")
	require.Zero(t, other.Load())
}
