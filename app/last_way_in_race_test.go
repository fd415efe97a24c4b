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
	"github.com/latchkey-auth/latchkey/models/passkeystore"
)

// twoWaysIn is a user whose only ways in are one linked identity and one
// passkey (no address, no password), signed in (recently) in one browser.
type twoWaysIn struct {
	e   *env
	u   *models.User
	acc *models.Account
	key *models.Authenticator
	c   *http.Client
	tok string
}

func newTwoWaysIn(t *testing.T, e *env, name string) *twoWaysIn {
	ctx := context.Background()
	w := &twoWaysIn{e: e, u: e.addUser("Ada", "", "")}
	w.acc = &models.Account{UserID: w.u.ID, Type: "oauth", Provider: "idp", ProviderAccountID: "ada-" + name}
	require.NoError(t, e.app.Store().LinkAccount(ctx, w.acc))
	w.key = &models.Authenticator{UserID: w.u.ID, CredentialID: "cred-" + name, PublicKey: []byte{1}, Name: "key", CreatedAt: time.Now().UTC()}
	require.NoError(t, passkeystore.New(e.app.Store()).AddAuthenticator(ctx, w.key))
	w.c = e.browser()
	e.setJarCookie(w.c, "next-auth.session-token", e.addDBSession(w.u, time.Now().Add(time.Hour)))
	w.tok = e.csrf(w.c)
	return w
}

// post posts form to path with the browser's csrfToken, from any
// goroutine (no require): the status and Location, or the error.
func (w *twoWaysIn) post(path string, form url.Values) (int, string) {
	form.Set("csrfToken", w.tok)
	req, _ := http.NewRequest(http.MethodPost, w.e.url(path), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := w.c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	return res.StatusCode, res.Header.Get("Location")
}

// left counts the user's identities and passkeys.
func (w *twoWaysIn) left(t *testing.T) (accounts, keys int64) {
	db := w.e.app.Store().DB()
	require.NoError(t, db.Model(&models.Account{}).Where("user_id = ?", w.u.ID).Count(&accounts).Error)
	require.NoError(t, db.Model(&models.Authenticator{}).Where("user_id = ?", w.u.ID).Count(&keys).Error)
	return accounts, keys
}

// lockWaiters counts the PostgreSQL lock requests not granted yet.
func lockWaiters(t *testing.T, e *env) func() int64 {
	return func() int64 {
		var n int64
		require.NoError(t, e.app.Store().DB().Raw("SELECT count(*) FROM pg_locks WHERE NOT granted").Scan(&n).Error)
		return n
	}
}

// answer is a request's status and Location.
type answer struct {
	status int
	where  string
}

// Removing the last passkey and unlinking the last identity at the same
// moment, on PostgreSQL, leaves one of them: each removal decides on the
// ways left under the user's row lock, so the second reads the first's
// deletion and is refused (LastSignInMethod), whichever starts first. A
// table lock holds the first removal mid-way while the second runs.
func TestLastWayInHoldsUnderARace(t *testing.T) {
	e := startPasskeys(t, backend{strategy: config.StrategyDatabase, postgres: true}, nil)
	waiting := lockWaiters(t, e)
	for _, first := range []string{"passkey", "identity"} {
		t.Run(first+" first", func(t *testing.T) {
			w := newTwoWaysIn(t, e, first)
			var removed, unlinked answer
			removeKey := func() { removed.status, removed.where = w.post("/passkeys/remove", url.Values{"id": {w.key.ID}}) }
			unlink := func() {
				unlinked.status, unlinked.where = w.post("/unlink-account", url.Values{"id": {w.acc.ID}, "json": {"true"}})
			}
			run, then, table := removeKey, unlink, "authenticators"
			if first == "identity" {
				run, then, table = unlink, removeKey, "accounts"
			}

			release := holdLocks(t, e.app.Store().DB(), "LOCK TABLE "+table+" IN EXCLUSIVE MODE") // reads go on, writes wait
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

			accounts, keys := w.left(t)
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

// "Sign out everywhere" asked to remove the linked identities keeps the
// oldest when no other way in is left, and decides that under the user's
// row lock too: a passkey removed while it runs (the removal counted the
// identity, the sign-out counted the passkey) no longer leaves the user
// with neither. The user's row and the accounts table are held so that
// both have read before either deletes.
func TestSignOutEverywhereKeepsTheLastWayInUnderARace(t *testing.T) {
	e := startPasskeys(t, backend{strategy: config.StrategyDatabase, postgres: true}, nil)
	waiting := lockWaiters(t, e)
	w := newTwoWaysIn(t, e, "everywhere")
	db := e.app.Store().DB()
	releaseUser := holdLocks(t, db, "SELECT id FROM users WHERE id = '"+w.u.ID+"' FOR UPDATE")
	releaseAccounts := holdLocks(t, db, "LOCK TABLE accounts IN EXCLUSIVE MODE") // reads go on, writes wait

	var removed, signedOut answer
	var wg sync.WaitGroup
	removedDone := make(chan struct{})
	wg.Go(func() {
		removed.status, removed.where = w.post("/passkeys/remove", url.Values{"id": {w.key.ID}})
		close(removedDone)
	})
	require.Eventually(t, func() bool { return waiting() > 0 }, 10*time.Second, 10*time.Millisecond, "the removal waits for the user's row")
	wg.Go(func() { signedOut.status, signedOut.where = w.post("/signout/all", url.Values{"removeLinked": {"1"}}) })
	require.Eventually(t, func() bool { return waiting() > 1 }, 10*time.Second, 10*time.Millisecond, "the sign-out waits")
	releaseUser()
	<-removedDone
	releaseAccounts()
	wg.Wait()

	accounts, keys := w.left(t)
	require.EqualValues(t, 1, accounts+keys, "one way in is left (passkey removal %v, sign-out %v)", removed, signedOut)
	require.Equal(t, e.base+"/passkeys", removed.where, "the passkey went first")
	require.EqualValues(t, 1, accounts, "the identity is kept")
	require.Equal(t, http.StatusFound, signedOut.status)
}
