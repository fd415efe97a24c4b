package app_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/models"
)

// startPasswords is the password flows' setup: startPw (a credentials
// provider next to the e-mail one, clock, logs) with a real SMTP catcher.
func startPasswords(t testing.TB, o envOpts) *env {
	t.Helper()
	if o.smtp == nil {
		o.smtp = &smtptest.Options{}
	}
	return startPw(t, o)
}

// form posts fields to an account page with the browser's CSRF token.
func (e *env) form(c *http.Client, page string, fields ...string) resp {
	e.t.Helper()
	f := url.Values{"csrfToken": {e.csrf(c)}}
	for i := 0; i+1 < len(fields); i += 2 {
		f.Set(fields[i], fields[i+1])
	}
	return e.post(c, page, f)
}

// flowLink waits for the n-th e-mail and returns its link to page
// (/signup/verify or /reset/confirm) and its subject.
func (e *env) flowLink(n int, page string) (link, subject string) {
	e.t.Helper()
	_, p := e.mail(n)
	l := regexp.MustCompile(`https?://\S+` + regexp.QuoteMeta(page) + `\?token=[0-9a-f]{64}`).FindString(p.Text)
	require.NotEmpty(e.t, l, "no %s link in %q", page, p.Text)
	return l, p.Subject
}

// mailCount is how many e-mails the catcher holds.
func (e *env) mailCount() int { return len(e.smtp.Mails()) }

// changeEmail asks, from c's session, to move its address to addr and
// opens the e-mailed link in c (JSON); it returns the link's answer.
func (e *env) changeEmail(c *http.Client, addr string) resp {
	e.t.Helper()
	n := e.mailCount()
	res := e.apiPost(c, "/change-email", "email", addr)
	require.Equal(e.t, http.StatusOK, res.StatusCode, res.body)
	link, _ := e.flowLink(n+1, "/account/email/confirm")
	return e.post(c, "/account/email/confirm", url.Values{"csrfToken": {e.csrf(c)}, "token": {linkQuery(e.t, link).Get("token")}, "json": {"true"}})
}

// signUpFor signs addr up with pw and finishes through the e-mailed link.
func (e *env) signUpFor(addr, pw string) *models.User {
	e.t.Helper()
	c, n := e.browser(), e.mailCount()
	res := e.form(c, "/signup", "email", addr, "password", pw)
	require.Equal(e.t, http.StatusOK, res.StatusCode, res.body)
	link, _ := e.flowLink(n+1, "/signup/verify")
	res = e.form(c, "/signup/verify", "token", linkQuery(e.t, link).Get("token"), "password", pw)
	require.Equal(e.t, http.StatusOK, res.StatusCode, res.body)
	require.Contains(e.t, res.body, "Your account is ready")
	u, err := e.app.Store().UserByEmail(context.Background(), addr)
	require.NoError(e.t, err)
	return u
}

// signInByLink signs c in as addr through a magic link it asked for.
func (e *env) signInByLink(c *http.Client, addr string) {
	e.t.Helper()
	link := e.emailLink(c, addr, e.origin+"/")
	res := e.get(c, link)
	require.Equal(e.t, http.StatusFound, res.StatusCode, res.body)
	got, _ := e.sessionUser(c)
	require.Equal(e.t, addr, got)
}

// passwordIs reports whether pw is the user's stored password ("" hash:
// none is stored).
func (e *env) passwordIs(userID, pw string) bool {
	e.t.Helper()
	hash, err := e.app.Store().PasswordHash(context.Background(), userID)
	if err != nil {
		require.ErrorIs(e.t, err, models.ErrNotFound)
		return false
	}
	ok, _, err := password.Verify(hash, pw)
	require.NoError(e.t, err)
	return ok
}
