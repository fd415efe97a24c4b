package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Reset: the link (30 minutes, once) opens a form without spending it; a
// refused password spends nothing; the new password replaces the old one,
// every session of the user ends (database rows deleted, JWTs revoked), the
// other user's session stays; a replayed link is refused and changes nothing.
func TestPasswordResetFlow(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			u := e.signUpFor("reset@example.com", goodPassword)
			phone, laptop, bystander := e.browser(), e.browser(), e.browser()
			e.signInByLink(phone, "reset@example.com")
			e.signInByLink(laptop, "reset@example.com")
			e.signInByLink(bystander, "someone@example.com")
			e.clock.Add(time.Second) // the sessions above are from an earlier second than the reset

			n := e.mailCount()
			res := e.form(e.browser(), "/reset", "email", "Reset@Example.com")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			link, subject := e.flowLink(n+1, "/reset/confirm")
			require.Contains(t, subject, "Choose a new password")
			token := linkQuery(t, link).Get("token")
			// The delivery's log line names the kind of mail, not the
			// address or the link.
			var delivered []string
			for _, l := range strings.Split(e.logs.String(), "\n") {
				if strings.Contains(l, "password reset e-mail delivered") {
					delivered = append(delivered, l)
				}
			}
			require.Len(t, delivered, 1, e.logs.String())
			require.Contains(t, delivered[0], "to=r***@example.com")
			require.NotContains(t, delivered[0], token)

			c := e.browser()
			page := e.get(c, link)
			require.Equal(t, http.StatusOK, page.StatusCode)
			require.Contains(t, page.body, "reset@example.com")
			for _, weak := range []string{"short", "password1", "reset@example.com", strings.Repeat("x", 129), "nul\x00byte-password", "bad\xffutf8-password", ""} {
				res = e.form(c, "/reset/confirm", "token", token, "password", weak)
				require.Equal(t, http.StatusBadRequest, res.StatusCode, "%q", weak)
			}
			require.True(t, e.passwordIs(u.ID, goodPassword), "refusals change nothing")
			require.Equal(t, "reset@example.com", userEmail(e.session(phone)))

			res = e.form(c, "/reset/confirm", "token", token, "password", otherPassword)
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Contains(t, res.body, "Password changed")
			require.True(t, e.passwordIs(u.ID, otherPassword))
			require.False(t, e.passwordIs(u.ID, goodPassword))
			require.Empty(t, e.session(phone), "every session of the user ended")
			require.Empty(t, e.session(laptop))
			require.Equal(t, "someone@example.com", userEmail(e.session(bystander)), "another user's session stays")

			// Replayed: dead, nothing changes.
			res = e.form(c, "/reset/confirm", "token", token, "password", "yet another long passphrase")
			require.Equal(t, http.StatusBadRequest, res.StatusCode)
			require.Contains(t, res.body, "invalid, expired or already used")
			require.True(t, e.passwordIs(u.ID, otherPassword))

			// The old password is refused, the new one signs in.
			e.clock.Add(time.Second)
			require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(phone, "reset@example.com", goodPassword).StatusCode)
			require.Equal(t, http.StatusOK, e.passwordSignIn(phone, "reset@example.com", otherPassword).StatusCode)
			require.Equal(t, "reset@example.com", userEmail(e.session(phone)))

			// An expired link: dead. (An hour later: the address's e-mail budget is full again.)
			e.clock.Add(time.Hour)
			n = e.mailCount()
			require.Equal(t, http.StatusOK, e.form(e.browser(), "/reset", "email", "reset@example.com").StatusCode)
			link, _ = e.flowLink(n+1, "/reset/confirm")
			e.clock.Add(31 * time.Minute)
			require.Equal(t, http.StatusBadRequest, e.get(e.browser(), link).StatusCode)
		})
	}
}

// The account page: signed out it sends to sign-in; a user with a password
// changes it with the current one (a wrong one is refused and changes
// nothing), and every session ends; a user without one gets a link by
// e-mail, which sets it.
func TestPasswordAccountPage(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			c := e.browser()
			res := e.get(c, "/account/password")
			require.Equal(t, http.StatusFound, res.StatusCode)
			require.True(t, strings.HasPrefix(res.location(), e.base+"/signin?callbackUrl="), res.location())

			u := e.signUpFor("change@example.com", goodPassword)
			e.signInByLink(c, "change@example.com")
			other := e.browser()
			e.signInByLink(other, "change@example.com")
			e.clock.Add(time.Second)
			page := e.get(c, "/account/password")
			require.Equal(t, http.StatusOK, page.StatusCode)
			require.Contains(t, page.body, `name="currentPassword"`)

			res = e.form(c, "/account/password", "currentPassword", otherPassword, "password", "brand new long passphrase")
			require.Equal(t, http.StatusBadRequest, res.StatusCode)
			require.Contains(t, res.body, "current password is wrong")
			res = e.form(c, "/account/password", "currentPassword", goodPassword, "password", "change@example.com")
			require.Equal(t, http.StatusBadRequest, res.StatusCode)
			require.True(t, e.passwordIs(u.ID, goodPassword))

			res = e.form(c, "/account/password", "currentPassword", goodPassword, "password", "brand new long passphrase")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.True(t, e.passwordIs(u.ID, "brand new long passphrase"))
			require.Empty(t, e.session(c))
			require.Empty(t, e.session(other))

			// Without a password: a link by e-mail, then the reset page sets it.
			linkOnly := e.browser()
			e.signInByLink(linkOnly, "nopw@example.com")
			page = e.get(linkOnly, "/account/password")
			require.Contains(t, page.body, "Add a password")
			n := e.mailCount()
			res = e.form(linkOnly, "/account/password")
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Contains(t, res.body, "Check your email")
			link, _ := e.flowLink(n+1, "/reset/confirm")
			res = e.form(e.browser(), "/reset/confirm", "token", linkQuery(t, link).Get("token"), "password", goodPassword)
			require.Equal(t, http.StatusOK, res.StatusCode)
			nopw, err := e.app.Store().UserByEmail(context.Background(), "nopw@example.com")
			require.NoError(t, err)
			require.True(t, e.passwordIs(nopw.ID, goodPassword))
		})
	}
}

// Bad input on every form: the documented answer (413 over max_body_bytes,
// 400 otherwise, HTML with a message), never a 5xx, nothing stored, nothing
// sent. JSON bodies are read like forms.
func TestPasswordPagesBadInput(t *testing.T) {
	e := startPasswords(t, envOpts{})
	c := e.browser()
	big := strings.Repeat("p", 1<<20)
	res := e.form(c, "/signup", "email", "big@example.com", "password", big)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	for _, f := range [][]string{
		{"email", "a@example.com", "password", strings.Repeat("p", 2000)},
		{"email", "a@example.com", "password", "nul\x00in-the-middle"},
		{"email", "a@example.com", "password", "bad \xc3\x28 utf-8 here"},
		{"email", "a@example.com"},
		{"password", goodPassword},
		{"email", "not an address", "password", goodPassword},
		{"email", "a@example.com\x00", "password", goodPassword},
	} {
		res = e.form(c, "/signup", f...)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "%q", f)
		require.Contains(t, res.body, `role="alert"`)
	}
	for _, p := range []string{"/signup/verify", "/reset/confirm"} {
		for _, tok := range []string{"", "nope", strings.Repeat("f", 64), "\xff\x00"} {
			res = e.form(c, p, "token", tok, "password", goodPassword)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s %q", p, tok)
		}
	}
	res = e.form(c, "/reset", "email", "")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	res = e.form(c, "/reset", "email", strings.Repeat("a", 400)+"@example.com")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	res = e.post(c, "/signup", map[string][]string{"email": {"a@example.com"}, "password": {goodPassword}})
	require.Equal(t, http.StatusFound, res.StatusCode, "no csrfToken: back to the form")
	require.Equal(t, e.base+"/signup?csrf=true", res.location())
	require.Zero(t, e.mailCount())
	require.Zero(t, e.tokens())
	require.Zero(t, e.counts().Users)

	// A JSON body is read like the form.
	req, err := http.NewRequest(http.MethodPost, e.url("/signup"), strings.NewReader(
		`{"csrfToken":"`+e.csrf(c)+`","email":"json@example.com","password":"`+goodPassword+`"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res = e.do(c, req)
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	require.Equal(t, 1, len(e.smtp.Wait(t, 1)))
	require.NotContains(t, e.logs.String(), goodPassword, "passwords are never logged")
}

// A current password left empty (or one no password can be: a NUL, or
// longer than any accepted) is a wrong one, not "too many wrong
// passwords": the page says the current password is wrong, the password
// and the sessions stay, and the throttle counts nothing (nothing was
// hashed). The sign-up link's page treats its password alike.
func TestPasswordAccountEmptyCurrentPassword(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPasswords(t, b.opts(envOpts{}))
			u := e.signUpFor("change@example.com", goodPassword)
			c := e.browser()
			e.signInByLink(c, "change@example.com")
			for _, current := range []string{"", "with\x00nul", strings.Repeat("x", 5000)} {
				res := e.form(c, "/account/password", "currentPassword", current, "password", "brand new long passphrase")
				require.Equal(t, http.StatusBadRequest, res.StatusCode, "%.20q", current)
				require.Contains(t, res.body, "current password is wrong", "%.20q", current)
				require.NotContains(t, res.body, "Too many wrong passwords", "%.20q", current)
			}
			require.True(t, e.passwordIs(u.ID, goodPassword))
			require.NotEmpty(t, e.session(c), "a refused change ends no session")
			// Nothing was counted: the right password still changes it at once.
			res := e.form(c, "/account/password", "currentPassword", goodPassword, "password", "brand new long passphrase")
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.True(t, e.passwordIs(u.ID, "brand new long passphrase"))

			n := e.mailCount()
			res = e.form(e.browser(), "/signup", "email", "new@example.com", "password", goodPassword)
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			link, _ := e.flowLink(n+1, "/signup/verify")
			res = e.form(e.browser(), "/signup/verify", "token", linkQuery(t, link).Get("token"), "password", "")
			require.Equal(t, http.StatusBadRequest, res.StatusCode)
			require.Contains(t, res.body, "not the password you chose")
		})
	}
}

// A reset request does the same work whether or not the address has an
// account, so the answer's time does not tell which (the pages' words are
// the same already): an unknown address gets an inert link row too, never
// sent and spent by nothing, before its "no such account" e-mail, as
// sign-up stores one for an address that has an account. Shown on
// PostgreSQL, where locking the links' table holds that write alone: both
// requests wait for it, and once it is free both are answered alike.
func TestPasswordResetSameWorkForAnyAddress(t *testing.T) {
	e := startPasswords(t, envOpts{postgres: true})
	e.signUpFor("known@example.com", goodPassword)
	addrs := []string{"known@example.com", "nobody@example.com"}
	for _, addr := range addrs {
		c := e.browser()
		form := url.Values{"csrfToken": {e.csrf(c)}, "email": {addr}}
		release := holdWrites(t, e.app.Store().DB(), true, "verification_tokens")
		require.Error(t, postGivingUp(t, c, e.url("/reset"), form), "%s: answered while the links' table was held", addr)
		release()
	}
	tokens, n := e.tokens(), e.mailCount()
	for i, addr := range addrs {
		res := e.form(e.browser(), "/reset", "email", addr)
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		e.mail(n + i + 1)
	}
	require.Equal(t, tokens+2, e.tokens(), "one row each")
	require.NotContains(t, e.logs.String(), "level=ERROR")
}
