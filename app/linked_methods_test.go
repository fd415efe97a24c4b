package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// linkBackends are backends() plus jwt sessions on PostgreSQL: linking
// reads the session's sign-in time, which each strategy keeps its own way.
func linkBackends() []backend {
	return append(backends(), backend{"jwt-postgres", config.StrategyJWT, true})
}

// providersOf are the providers of the user's linked accounts, oldest first.
func (e *env) providersOf(userID string) []string {
	e.t.Helper()
	accs, err := e.app.Store().AccountsOf(context.Background(), userID)
	require.NoError(e.t, err)
	out := []string{}
	for _, a := range accs {
		out = append(out, a.Provider)
	}
	return out
}

// TestLinkingNeedsARecentSignIn (issue 26, M3): a session that signed in
// more than 10 minutes ago (a borrowed or stolen one) cannot link a new
// OAuth identity — SessionRequired, nothing created, the session as it
// was, no e-mail — while a fresh sign-in can, and the address is told by
// e-mail at the real SMTP server. An identity already linked signs in
// however old the session is.
func TestLinkingNeedsARecentSignIn(t *testing.T) {
	for _, b := range linkBackends() {
		t.Run(b.name, func(t *testing.T) {
			e := startMail(t, b.opts(envOpts{}.oidc(nil, nil)))
			c := e.browser()
			uid := e.emailSignIn(c, "ada@example.com") // mail 1: the sign-in link

			e.clock.Add(11 * time.Minute)
			e.idp.QueueUser(user("mallory", "mallory@evil.example"))
			requireChainEndsWith(t, e, e.following(c), "idp", "SessionRequired")
			require.Zero(t, e.counts().Accounts, "nothing linked")
			require.EqualValues(t, 1, e.counts().Users, "nobody created")
			addr, id := e.sessionUser(c)
			require.Equal(t, []string{"ada@example.com", uid}, []string{addr, id}, "the session is unchanged")
			page := e.get(c, "/signin?error=SessionRequired")
			require.Contains(t, page.body, "Please sign in to access this page.")

			e.emailSignIn(c, "ada@example.com") // mail 2: a fresh sign-in
			e.idp.QueueUser(user("ada-idp", "ada@elsewhere.example"))
			res := e.signIn(e.following(c), "idp", "/home")
			require.Equal(t, e.origin+"/home", res.location())
			require.Equal(t, uid, e.onlyAccount().UserID, "linked to the signed-in user")
			m, p := e.mail(3)
			require.Equal(t, []string{"ada@example.com"}, m.To)
			require.Contains(t, p.Subject, "A sign-in method was added to your account")
			require.Contains(t, p.Text, "Test IdP was linked to your account")
			require.NotContains(t, p.Text, "/reset", "no password reset offered here (no credentials provider)")

			e.clock.Add(time.Hour)
			e.idp.QueueUser(user("ada-idp", "ada@elsewhere.example"))
			res = e.signIn(e.following(c), "idp", "/home")
			require.Equal(t, e.origin+"/home", res.location(), "an identity already linked signs in whatever the session's age")
			_, id = e.sessionUser(c)
			require.Equal(t, uid, id)
			require.Len(t, e.smtp.Mails(), 3, "no notice for a sign-in with a linked identity")
		})
	}
}

// A notice that cannot be delivered does not undo the link; the failure
// is logged once, without the address.
func TestLinkNoticeFailureKeepsTheLink(t *testing.T) {
	var reject atomic.Bool
	e := startMail(t, envOpts{smtp: &smtptest.Options{RejectRcpt: func(string) bool { return reject.Load() }}}.oidc(nil, nil))
	c := e.browser()
	uid := e.emailSignIn(c, "ada@example.com")
	reject.Store(true)
	e.idp.QueueUser(user("ada-idp", "ada@elsewhere.example"))
	res := e.signIn(e.following(c), "idp", "/home")
	require.Equal(t, e.origin+"/home", res.location())
	require.Equal(t, uid, e.onlyAccount().UserID)
	logs := e.logs.String()
	require.Equal(t, 1, strings.Count(logs, "notice e-mail failed"), logs)
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "notice e-mail failed") {
			require.NotContains(t, line, "ada@example.com")
		}
	}
}

// POST /signout/all with removeLinked=1 removes the user's linked
// identities: all of them when the user has another way to sign in (here
// an e-mailed link to a verified address), else all but the oldest. Without
// it they stay. Asking it needs a recent sign-in, as unlinking one does.
func TestSignOutEverywhereRemovesLinkedMethods(t *testing.T) {
	for _, b := range linkBackends() {
		t.Run(b.name, func(t *testing.T) {
			e := startMail(t, b.opts(envOpts{}.oidc(twoProviders, nil)))
			signOutAll := func(c *http.Client, extra url.Values) {
				form := url.Values{"csrfToken": {e.csrf(c)}, "callbackUrl": {e.origin + "/bye"}}
				for k, v := range extra {
					form[k] = v
				}
				res := e.post(c, "/signout/all", form)
				require.Equal(t, e.origin+"/bye", res.location(), res.body)
				require.Empty(t, e.session(c))
			}

			ada := e.browser()
			uid := e.emailSignIn(ada, "ada@example.com")
			e.idp.QueueUser(user("ada-idp", "ada@elsewhere.example"))
			e.signIn(e.following(ada), "idp", "/home")
			e.idp.QueueUser(user("ada-other", "ada@other.example"))
			e.signIn(e.following(ada), "other", "/home")
			require.Equal(t, []string{"idp", "other"}, e.providersOf(uid))
			// Removing them is unlinking them: a session signed in more
			// than 10 minutes ago is sent to sign in again, and nothing
			// changes (no link removed, nobody signed out).
			e.clock.Add(11 * time.Minute)
			res := e.post(ada, "/signout/all", url.Values{"csrfToken": {e.csrf(ada)}, "callbackUrl": {e.origin + "/bye"}, "removeLinked": {"1"}})
			require.Equal(t, e.base+"/signin?"+url.Values{"callbackUrl": {e.origin + "/bye"}, "error": {"SessionRequired"}}.Encode(), res.location(), res.body)
			require.Equal(t, []string{"idp", "other"}, e.providersOf(uid), "an old session removes no link")
			require.NotEmpty(t, e.session(ada), "and signs nobody out")
			signOutAll(ada, nil)
			require.Equal(t, []string{"idp", "other"}, e.providersOf(uid), "not asked: the links stay")
			e.clock.Add(time.Second)
			e.emailSignIn(ada, "ada@example.com")
			signOutAll(ada, url.Values{"removeLinked": {"1"}})
			require.Empty(t, e.providersOf(uid), "an e-mail sign-in remains: every link goes")

			// A user who signs in only through OAuth (no address, so no
			// e-mail sign-in) keeps the identity they began with.
			solo := e.following(e.browser())
			e.idp.QueueUser(user("solo-idp", ""))
			e.signIn(solo, "idp", "/home")
			e.idp.QueueUser(user("solo-other", ""))
			e.signIn(solo, "other", "/home")
			_, soloID := e.sessionUser(solo)
			require.Equal(t, []string{"idp", "other"}, e.providersOf(soloID))
			signOutAll(noRedirects(solo), url.Values{"removeLinked": {"true"}})
			require.Equal(t, []string{"idp"}, e.providersOf(soloID), "never the last way to sign in")
		})
	}
}

// The reset form offers to remove linked identities when there are some;
// ticked, the reset removes them all (the user has a password now).
func TestPasswordResetRemovesLinkedMethods(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}.oidc(nil, nil)))
			u := e.signUpFor("ada@example.com", goodPassword)
			reset := func(fields ...string) {
				n := e.mailCount()
				res := e.form(e.browser(), "/reset", "email", "ada@example.com")
				require.Equal(t, http.StatusOK, res.StatusCode, res.body)
				link, _ := e.flowLink(n+1, "/reset/confirm")
				c := e.browser()
				page := e.get(c, link)
				require.Equal(t, len(e.providersOf(u.ID)) > 0, strings.Contains(page.body, `name="removeLinked"`), "the option only when there is something to remove")
				res = e.form(c, "/reset/confirm", append([]string{"token", linkQuery(t, link).Get("token"), "password", otherPassword}, fields...)...)
				require.Equal(t, http.StatusOK, res.StatusCode, res.body)
				require.Contains(t, res.body, "Password changed")
			}

			c := e.browser()
			e.signInByLink(c, "ada@example.com")
			e.idp.QueueUser(user("ada-idp", "ada@elsewhere.example"))
			e.signIn(e.following(c), "idp", "/")
			require.Equal(t, []string{"idp"}, e.providersOf(u.ID))
			_, notice := e.mail(e.mailCount())
			require.Contains(t, notice.Text, e.base+"/reset?lang=en", "the notice links the reset that can remove the method")
			reset()
			require.Equal(t, []string{"idp"}, e.providersOf(u.ID), "not ticked: the link stays")
			e.clock.Add(time.Hour) // the address's e-mail budget
			reset("removeLinked", "1")
			require.Empty(t, e.providersOf(u.ID))
			require.True(t, e.passwordIs(u.ID, otherPassword))
			e.clock.Add(time.Hour)
			reset()
		})
	}
}
