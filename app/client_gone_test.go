package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/app/config"
)

// holdLocks opens a transaction that runs stmt and keeps the locks it
// took until release (or the test's end, so that a failed assertion does
// not leave them to the app's Close).
func holdLocks(t *testing.T, db *gorm.DB, stmt string) (release func()) {
	t.Helper()
	hold := db.Begin()
	require.NoError(t, hold.Error)
	require.NoError(t, hold.Exec(stmt).Error)
	held := true
	release = func() {
		if held {
			held = false
			require.NoError(t, hold.Rollback().Error)
		}
	}
	t.Cleanup(release)
	return release
}

// holdWrites keeps the app's writes to table waiting: an exclusive lock
// on the table on PostgreSQL (reads wait too), the database's write lock
// on SQLite (the app's transactions are BEGIN IMMEDIATE; readers go on).
func holdWrites(t *testing.T, db *gorm.DB, pg bool, table string) (release func()) {
	t.Helper()
	if pg {
		return holdLocks(t, db, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE")
	}
	return holdLocks(t, db, "CREATE TABLE client_gone_probe (x INTEGER)") // any write takes the lock
}

// postGivingUp posts form to target through c and gives up after 300 ms,
// as a client that times out or is closed: the error says it did.
func postGivingUp(t *testing.T, c *http.Client, target string, form url.Values) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err = c.Do(req)
	return err
}

// logsAfter waits up to 15 s for needle in what the app logged after mark
// (a length of e.logs) and returns that part.
func logsAfter(e *env, mark int, needle string) string {
	var lines string
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if lines = e.logs.String()[mark:]; strings.Contains(lines, needle) {
			break
		}
	}
	return lines
}

// TestEmailSignInAbandonedWhileTheDatabaseWaits: a browser that gives up
// on an e-mail sign-in while the link's row waits for the database
// leaves nothing behind (no link stored, no e-mail sent) and the next
// request works. On PostgreSQL the driver cancels the waiting statement
// with the request, so the failure is the client's and its line is info
// with client_gone=true, not the "request failed" warning an operator
// would look into; on SQLite the link's write waits for the lock until
// the busy timeout whatever the client does, and "database is locked"
// is the service's problem, so it stays a warning.
func TestEmailSignInAbandonedWhileTheDatabaseWaits(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startMail(t, envOpts{postgres: pg, logs: true})
		c := e.browser()
		form := url.Values{"csrfToken": {e.csrf(c)}, "email": {"ada@example.com"}}
		tokens := e.tokens()
		mark := len(e.logs.String())

		release := holdWrites(t, e.app.Store().DB(), pg, "verification_tokens")
		require.Error(t, postGivingUp(t, c, e.url("/signin/email"), form), "the sign-in answered while the database held its write")

		// The request ends when the store gives up (at once on
		// PostgreSQL; after the busy timeout on SQLite): its access line
		// is the sign.
		lines := logsAfter(e, mark, "msg=request method=POST")
		release()
		require.Contains(t, lines, "msg=request method=POST", "the abandoned request never ended")
		if pg {
			require.Contains(t, lines, `level=INFO msg="request failed"`)
			require.Contains(t, lines, "context canceled")
			require.Contains(t, lines, "client_gone=true")
			require.NotContains(t, lines, "level=WARN")
			require.NotContains(t, lines, "level=ERROR")
		} else { // the e-mail rate limit's counter meets the lock first
			require.Contains(t, lines, `level=WARN msg="database unavailable"`)
			require.Contains(t, lines, "database is locked")
			require.NotContains(t, lines, "client_gone")
		}
		require.Equal(t, tokens, e.tokens(), "the abandoned sign-in stored a link")
		require.Empty(t, e.smtp.Mails(), "the abandoned sign-in sent an e-mail")

		e.emailLink(c, "ada@example.com", e.base)
	})
}

// TestProviderTokenAbandonedWhileTheSessionWaits: an app backend that
// gives up on GET /token while the session's lookup waits (PostgreSQL;
// SQLite's readers never wait for a writer) gets nothing, nothing
// changes, the line is info with client_gone=true instead of the
// "session lookup failed" warning, and the next request is answered.
func TestProviderTokenAbandonedWhileTheSessionWaits(t *testing.T) {
	e := startTokens(t, true, func(c *config.Config) { c.Session.CacheTTL = 0 }) // every lookup reads the table
	first := e.accessToken()
	mark := len(e.logs.String())

	release := holdWrites(t, e.app.Store().DB(), true, "sessions")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url("/token/idp"), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+clientSecret)
	_, err = e.client.Do(req)
	require.Error(t, err, "GET /token answered while its session was locked")

	lines := logsAfter(e.env, mark, "msg=request method=GET")
	release()
	require.Contains(t, lines, `level=INFO msg="token request: session lookup failed"`)
	require.Contains(t, lines, "context canceled")
	require.Contains(t, lines, "client_gone=true")
	require.NotContains(t, lines, "level=WARN")
	require.NotContains(t, lines, "level=ERROR")
	require.NotContains(t, lines, first)

	require.Equal(t, first, e.accessToken(), "the abandoned request changed the kept token")
}

// TestSignOutEverywhereFinishesWhenTheBrowserGivesUp: a sign-out
// everywhere, once asked for, runs to its end when the browser gives up
// while the revocation waits for the database (a test transaction holds
// session_revocations on PostgreSQL): the user's other sessions end, as
// they would have with an answer, rather than whatever had committed
// before the hang-up (remembered browsers forgotten, linked methods
// removed) standing alone with every session alive.
func TestSignOutEverywhereFinishesWhenTheBrowserGivesUp(t *testing.T) {
	e := startMail(t, envOpts{postgres: true, logs: true})
	alice1 := e.signInByEmail("alice@example.com")
	alice2 := e.signInByEmail("alice@example.com")
	e.clock.Add(time.Second) // a revocation ends the sessions signed in before its second
	form := url.Values{"csrfToken": {e.csrf(alice1)}, "callbackUrl": {e.origin + "/bye"}}
	mark := len(e.logs.String())

	release := holdWrites(t, e.app.Store().DB(), true, "session_revocations")
	require.Error(t, postGivingUp(t, noRedirects(alice1), e.url("/signout/all"), form), "the sign-out everywhere answered while the revocations were held")
	time.Sleep(500 * time.Millisecond)
	release()

	lines := logsAfter(e, mark, "msg=request method=POST")
	require.Contains(t, lines, `msg="signed out everywhere: sessions revoked"`)
	require.NotContains(t, lines, "level=ERROR")
	require.NotContains(t, lines, "level=WARN")
	addr, _ := e.sessionUser(alice2)
	require.Empty(t, addr, "the user's session in another browser lives on")
	require.Zero(t, e.counts().Sessions)
}

// TestLinkNoticeWhenTheSignInFailsAfterTheLink: an OAuth identity linked
// to the signed-in user is told to the user's address even when the
// sign-in fails after the link was made — here because the browser gave
// up while its new session waited for the database (a test transaction
// holds sessions' writes on PostgreSQL). The link stands, so the notice
// must go: it once went only with a sign-in that succeeded.
func TestLinkNoticeWhenTheSignInFailsAfterTheLink(t *testing.T) {
	e := startMail(t, envOpts{postgres: true}.oidc(nil, nil))
	c := e.browser()
	uid := e.emailSignIn(c, "ada@example.com") // mail 1: the sign-in link
	e.idp.QueueUser(user("ada-idp", "ada@elsewhere.example"))
	res := e.signIn(c, "idp", "/home")
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	res = e.get(c, res.location()) // the IdP answers at once
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	callback := res.location()

	release := holdLocks(t, e.app.Store().DB(), "LOCK TABLE sessions IN SHARE MODE") // reads go on, writes wait
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, callback, nil)
	require.NoError(t, err)
	_, err = c.Do(req)
	require.Error(t, err, "the callback answered while the sessions were held")
	time.Sleep(500 * time.Millisecond)
	release()

	require.Equal(t, []string{"idp"}, e.providersOf(uid), "the link was made")
	m, p := e.mail(2)
	require.Equal(t, []string{"ada@example.com"}, m.To)
	require.Contains(t, p.Subject, "A sign-in method was added to your account")
}

// TestSignOutFinishesWhenTheBrowserGivesUp: a sign-out whose write waits
// for the database (a test transaction holds it) and whose browser gives
// up meanwhile still ends the session once the database answers: the
// database session's row is gone, so the cookie the browser kept (it
// never saw the answer that cleared it) signs nobody in, and the
// session.ended webhook goes out — for a JWT session too, where the
// event is the sign-out's only write. A shared computer whose user
// clicked "Sign out" and closed the tab is signed out.
func TestSignOutFinishesWhenTheBrowserGivesUp(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			rx := newHookReceiver(t)
			e := startMail(t, b.opts(envOpts{config: rx.configure}))
			runBackground(t, e)
			c := e.signInByEmail("ann@example.com")
			_, uid := e.sessionUser(c)
			rx.waitFor("session.created", 1)

			table := "sessions"
			if b.strategy == config.StrategyJWT {
				table = "webhook_deliveries"
			}
			form := url.Values{"csrfToken": {e.csrf(c)}, "callbackUrl": {e.origin + "/bye"}}
			release := holdWrites(t, e.app.Store().DB(), b.postgres, table)
			require.Error(t, postGivingUp(t, noRedirects(c), e.url("/signout"), form), "the sign-out answered while its write was held")
			time.Sleep(500 * time.Millisecond)
			release()

			ended := rx.waitFor("session.ended", 1)
			require.Equal(t, uid, ended[0].Data["user_id"])
			require.Equal(t, "signout", ended[0].Data["reason"])
			if b.strategy == config.StrategyDatabase {
				require.Eventually(t, func() bool { return e.counts().Sessions == 0 }, 5*time.Second, 20*time.Millisecond, "the session's row lives on")
				require.Empty(t, e.session(c), "the cookie the browser kept still signs it in")
			}
		})
	}
}
