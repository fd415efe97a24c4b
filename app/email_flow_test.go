package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// The whole magic-link flow over real HTTP and real SMTP, in both session
// strategies and on both databases: request, receive and parse the e-mail, open the link in the
// browser that asked for it, end up signed in (on another device, see
// TestEmailLinkOpenedInAnotherBrowserAsksFirst).
func TestEmailSignInFlow(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startMail(t, b.opts(envOpts{}))
			clicker := e.browser()
			link := e.emailLink(clicker, "  Alice@Example.COM ", e.origin+"/home")

			m, msg := e.mail(1)
			require.Equal(t, []string{"alice@example.com"}, m.To)
			host := strings.TrimPrefix(e.origin, "http://")
			require.Equal(t, "Sign in to "+host, msg.Subject)
			require.Equal(t, "multipart/alternative", msg.ContentType)
			require.Contains(t, msg.Header.Get("From"), "no-reply@example.com")
			require.Contains(t, msg.HTML, `href="`+strings.ReplaceAll(link, "&", "&amp;")+`"`, "button and plain link carry the same URL")
			require.Contains(t, msg.HTML, ">Sign in</a>")
			require.Contains(t, msg.HTML, strings.ReplaceAll(host, ".", "&#8203;."), "host dots broken against auto-linking")

			// Link format: v4 key order, absolute callbackUrl, 64-hex token.
			require.True(t, strings.HasPrefix(link, e.base+"/callback/email?callbackUrl="), link)
			q := linkQuery(t, link)
			require.Regexp(t, regexp.MustCompile(`[?]callbackUrl=[^&]+&token=[0-9a-f]{64}&email=alice%40example\.com$`), link)
			require.Equal(t, e.origin+"/home", q.Get("callbackUrl"))

			// Stored: only sha256hex(token + secret), expiring in 24 h.
			rows, err := e.app.Store().VerificationTokensFor(context.Background(), "alice@example.com")
			require.NoError(t, err)
			require.Len(t, rows, 1)
			row := rows[0]
			sum := sha256.Sum256([]byte(q.Get("token") + testSecret))
			require.Equal(t, hex.EncodeToString(sum[:]), row.TokenHash)
			require.Equal(t, "alice@example.com", row.Identifier)
			require.WithinDuration(t, e.clock.Now().Add(24*time.Hour), row.Expires, time.Second)

			res := e.get(clicker, link)
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, e.origin+"/home", res.location())
			addr, id := e.sessionUser(clicker)
			require.Equal(t, "alice@example.com", addr)

			u, err := e.app.Store().UserByID(context.Background(), id)
			require.NoError(t, err)
			require.NotNil(t, u.EmailVerified)
			require.WithinDuration(t, e.clock.Now(), *u.EmailVerified, time.Second)
			require.Zero(t, e.tokens(), "the token is spent")
			if b.strategy == config.StrategyDatabase {
				require.EqualValues(t, 1, e.counts().Sessions)
			}

			// Neither the token nor the link ever reaches the log.
			require.NotContains(t, e.logs.String(), q.Get("token"))
		})
	}
}

// v4 JSON mode: 200 {"url": verify-request URL}.
func TestEmailSignInJSONMode(t *testing.T) {
	e := startMail(t, envOpts{})
	res := e.requestLink(e.browser(), "bob@example.com", url.Values{"json": {"true"}, "callbackUrl": {e.origin + "/x"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.JSONEq(t, `{"url":"`+e.base+`/verify-request?provider=email&type=email"}`, res.body)
	require.Equal(t, e.origin+"/x", linkQuery(t, e.link(1)).Get("callbackUrl"))
}

// A used link is the Verification error everywhere: in the browser that
// used it, and in any other (no confirm page for a dead link).
func TestEmailLinkIsSingleUse(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startMail(t, envOpts{postgres: pg})
		c := e.browser()
		link := e.emailLink(c, "alice@example.com", e.origin+"/")
		require.Equal(t, http.StatusFound, e.get(c, link).StatusCode)
		e.requireError(e.get(c, link), "Verification")
		again := e.browser()
		e.requireError(e.get(again, link), "Verification")
		addr, _ := e.sessionUser(again)
		require.Empty(t, addr)
		require.EqualValues(t, 1, e.counts().Sessions)

		// Used through the confirm page of another browser, the same.
		link = e.emailLink(e.browser(), "bob@example.com", e.origin+"/")
		require.Equal(t, http.StatusFound, e.confirmLink(e.browser(), link).StatusCode)
		e.requireError(e.get(e.browser(), link), "Verification")
		require.EqualValues(t, 2, e.counts().Sessions)
	})
}

func TestEmailLinkExpires(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) { p.MaxAge = config.Duration(10 * time.Minute) }})
	link := e.emailLink(e.browser(), "alice@example.com", e.origin+"/")
	e.clock.Add(10*time.Minute + time.Second)
	c := e.browser()
	e.requireError(e.get(c, link), "Verification")
	require.EqualValues(t, 0, e.counts().Users, "no user for an expired link")
	require.EqualValues(t, 0, e.counts().Sessions)
	require.Contains(t, e.logs.String(), "expired")

	// The hourly purge removes it.
	_, err := e.app.Store().PurgeExpired(context.Background(), e.clock.Now())
	require.NoError(t, err)
	require.Zero(t, e.tokens())
}

func TestEmailLinkJustBeforeExpiry(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) { p.MaxAge = config.Duration(10 * time.Minute) }})
	c := e.browser()
	link := e.emailLink(c, "alice@example.com", e.origin+"/")
	e.clock.Add(10*time.Minute - time.Second)
	require.Equal(t, http.StatusFound, e.get(c, link).StatusCode)
}

// In the browser that asked for it, a link whose email parameter was
// changed is refused (as next-auth) and, like every refusal, does not spend
// the token: the real link still works. (Elsewhere the parameter is simply
// ignored: the confirm page names the stored address.)
func TestEmailLinkWrongAddress(t *testing.T) {
	e := startMail(t, envOpts{})
	c := e.browser()
	link := e.emailLink(c, "alice@example.com", e.origin+"/")
	q := linkQuery(t, link)
	for _, other := range []string{"mallory@example.com", "ALICE@example.com"} {
		q2 := url.Values{"callbackUrl": {q.Get("callbackUrl")}, "token": {q.Get("token")}, "email": {other}}
		e.requireError(e.get(c, e.base+"/callback/email?"+q2.Encode()), "Verification")
	}
	e.requireError(e.get(c, e.base+"/callback/email?token="+strings.Repeat("0", 64)+"&email=alice%40example.com"), "Verification")
	require.EqualValues(t, 1, e.tokens())
	require.EqualValues(t, 0, e.counts().Users)

	require.Equal(t, http.StatusFound, e.get(c, link).StatusCode)
	addr, _ := e.sessionUser(c)
	require.Equal(t, "alice@example.com", addr)
}

// next-auth redirects a link without a token to the lower-case
// "configuration" error (the 500 page).
func TestEmailLinkWithoutToken(t *testing.T) {
	e := startMail(t, envOpts{})
	e.requireError(e.get(e.browser(), e.base+"/callback/email?email=alice%40example.com"), "configuration")
	res := e.get(e.browser(), e.base+"/error?error=configuration")
	require.Equal(t, http.StatusInternalServerError, res.StatusCode)
}

// Two clicks on one link at the same time (tabs of the browser that asked
// for it, so every click signs in directly) give exactly one session. The
// SignIn hook holds every click until all have passed the token look-up, so
// they really race for the consuming transaction.
func TestEmailLinkConcurrentClicks(t *testing.T) {
	const n = 6
	eachDatabase(t, func(t *testing.T, pg bool) {
		var mu sync.Mutex
		arrived, all := 0, make(chan struct{})
		hooks := &signin.Hooks{SignIn: func(_ context.Context, in signin.SignInInput) (bool, string) {
			if in.VerificationRequest {
				return true, ""
			}
			mu.Lock()
			if arrived++; arrived == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-time.After(5 * time.Second):
				t.Error("not every click reached the SignIn hook")
			}
			return true, ""
		}}
		e := startMail(t, envOpts{hooks: hooks, postgres: pg})
		requester := e.browser()
		link := e.emailLink(requester, "alice@example.com", e.origin+"/in")
		clients := make([]*http.Client, n)
		for i := range clients {
			clients[i] = e.browser()
			e.shareBinding(requester, clients[i])
		}
		results := make([]resp, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				req, _ := http.NewRequest(http.MethodGet, link, nil)
				res, err := clients[i].Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				results[i] = resp{Response: res}
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for _, r := range results {
			switch r.location() {
			case e.origin + "/in":
				won++
			case e.base + "/error?error=Verification":
			default:
				t.Fatalf("unexpected answer %d %q", r.StatusCode, r.location())
			}
		}
		require.Equal(t, 1, won)
		require.EqualValues(t, 1, e.counts().Sessions)
		require.EqualValues(t, 1, e.counts().Users)
		signedIn := 0
		for _, c := range clients {
			if addr, _ := e.sessionUser(c); addr != "" {
				signedIn++
			}
		}
		require.Equal(t, 1, signedIn)
	})
}

// A user who first came through OAuth with a verified address and then
// uses an e-mail link with the same address is the same user: no new user.
func TestEmailAfterOAuthSameUser(t *testing.T) {
	e := startMail(t, envOpts{})
	ctx := context.Background()
	name, addr := "Alice", "alice@example.com"
	verifiedAt := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	u := &models.User{Name: &name, Email: &addr, EmailVerified: &verifiedAt}
	require.NoError(t, e.app.Store().CreateUserWithAccount(ctx, u,
		&models.Account{Type: "oidc", Provider: "idp", ProviderAccountID: "sub-alice"}))

	c := e.browser()
	require.Equal(t, http.StatusFound, e.get(c, e.emailLink(c, "Alice@example.com", e.origin+"/")).StatusCode)
	got, id := e.sessionUser(c)
	require.Equal(t, addr, got)
	require.Equal(t, u.ID, id)
	require.Equal(t, "Alice", e.session(c)["user"].(map[string]any)["name"])
	require.EqualValues(t, 1, e.counts().Users)
	require.EqualValues(t, 1, e.counts().Accounts)
	after, err := e.app.Store().UserByID(ctx, u.ID)
	require.NoError(t, err)
	require.NotNil(t, after.EmailVerified)
}

// A browser signed in as Bob that opens Alice's link ends up as Alice, and
// Bob's database session is deleted rather than orphaned (next-auth).
func TestEmailSignInReplacesOtherUsersSession(t *testing.T) {
	e := startMail(t, envOpts{})
	c := e.browser()
	require.Equal(t, http.StatusFound, e.get(c, e.emailLink(c, "bob@example.com", e.origin+"/")).StatusCode)
	require.EqualValues(t, 1, e.counts().Sessions)
	require.Equal(t, http.StatusFound, e.get(c, e.emailLink(c, "alice@example.com", e.origin+"/")).StatusCode)
	addr, _ := e.sessionUser(c)
	require.Equal(t, "alice@example.com", addr)
	require.EqualValues(t, 1, e.counts().Sessions, "Bob's session is gone")
}
