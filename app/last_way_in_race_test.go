package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
)

// Removing the last passkey and unlinking the last identity at the same
// moment, on PostgreSQL, leaves one of them: each removal decides on the
// ways left under the user's row lock, so the second reads the first's
// deletion and is refused (LastSignInMethod), whichever starts first. A
// table lock holds the first removal mid-way while the second runs.
func TestLastWayInHoldsUnderARace(t *testing.T) {
	e := startPasskeys(t, backend{strategy: config.StrategyDatabase, postgres: true}, nil)
	db := e.app.Store().DB()
	waiting := func() int64 {
		var n int64
		require.NoError(t, db.Raw("SELECT count(*) FROM pg_locks WHERE NOT granted").Scan(&n).Error)
		return n
	}
	ctx := context.Background()
	for _, first := range []string{"passkey", "identity"} {
		t.Run(first+" first", func(t *testing.T) {
			// No address, no password: the identity and the passkey are
			// the only ways in.
			u := e.addUser("Ada", "", "")
			acc := &models.Account{UserID: u.ID, Type: "oauth", Provider: "idp", ProviderAccountID: "ada-" + first}
			require.NoError(t, e.app.Store().LinkAccount(ctx, acc))
			key := &models.Authenticator{UserID: u.ID, CredentialID: "cred-" + first, PublicKey: []byte{1}, Name: "key", CreatedAt: time.Now().UTC()}
			require.NoError(t, e.app.Store().AddAuthenticator(ctx, key))
			c := e.browser()
			e.setJarCookie(c, "next-auth.session-token", e.addDBSession(u, time.Now().Add(time.Hour)))
			tok := e.csrf(c)

			post := func(path string, form url.Values) (int, string) {
				form.Set("csrfToken", tok)
				req, _ := http.NewRequest(http.MethodPost, e.url(path), strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				res, err := c.Do(req)
				if err != nil {
					return 0, err.Error()
				}
				defer res.Body.Close()
				return res.StatusCode, res.Header.Get("Location")
			}
			type answer struct {
				status int
				where  string
			}
			var removed, unlinked answer
			removeKey := func() { removed.status, removed.where = post("/passkeys/remove", url.Values{"id": {key.ID}}) }
			unlink := func() {
				unlinked.status, unlinked.where = post("/unlink-account", url.Values{"id": {acc.ID}, "json": {"true"}})
			}
			run, then, table := removeKey, unlink, "authenticators"
			if first == "identity" {
				run, then, table = unlink, removeKey, "accounts"
			}

			release := holdLocks(t, db, "LOCK TABLE "+table+" IN EXCLUSIVE MODE") // reads go on, writes wait
			var wg sync.WaitGroup
			wg.Go(run)
			require.Eventually(t, func() bool { return waiting() > 0 }, 10*time.Second, 10*time.Millisecond, "the first removal waits")
			done := make(chan struct{})
			wg.Go(func() { then(); close(done) })
			require.Eventually(t, func() bool {
				select {
				case <-done:
					return true
				default:
					return waiting() > 1
				}
			}, 10*time.Second, 10*time.Millisecond, "the second removal ran or waits")
			release()
			wg.Wait()

			var accounts, keys int64
			require.NoError(t, db.Model(&models.Account{}).Where("user_id = ?", u.ID).Count(&accounts).Error)
			require.NoError(t, db.Model(&models.Authenticator{}).Where("user_id = ?", u.ID).Count(&keys).Error)
			require.EqualValues(t, 1, accounts+keys, "one way in is left (passkey removal %v, unlink %v)", removed, unlinked)
			require.Equal(t, http.StatusFound, removed.status)
			if first == "passkey" {
				require.Equal(t, e.base+"/passkeys", removed.where)
				require.Equal(t, http.StatusConflict, unlinked.status, "the unlink is refused: LastSignInMethod")
			} else {
				require.Equal(t, http.StatusOK, unlinked.status)
				require.Equal(t, e.base+"/passkeys?error=LastSignInMethod", removed.where)
			}
		})
	}
}
