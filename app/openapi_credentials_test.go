package app_test

import (
	"net/http"
	"net/url"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// credentials drives the password provider's answers through the checker:
// a sign-in (JSON mode), a refusal in JSON mode (401) and as a form (302),
// a JSON body, and the GET of its callback (400); then, on an instance
// whose one hashing slot is taken, TryLater (503, and 302 as a form).
func (a apiDriver) credentials() {
	e, t := a.e, a.e.t
	e.addPasswordUser("pw@example.com", goodPassword, true)
	c := a.browser()
	res := e.passwordSignIn(c, "pw@example.com", goodPassword)
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	a.signedIn(c, "pw@example.com")

	c = a.browser()
	res = e.passwordSignIn(c, "pw@example.com", "not the password")
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
	res = e.post(c, "/callback/credentials", url.Values{"csrfToken": {e.csrf(c)}, "email": {"pw@example.com"}, "password": {"nope nope"}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	res = e.do(c, a.request(http.MethodPost, "/callback/credentials",
		`{"csrfToken":"`+e.csrf(c)+`","email":"pw@example.com","password":"nope nope","json":"true"}`, "application/json"))
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Equal(t, http.StatusBadRequest, e.get(c, "/callback/credentials").StatusCode)

	h := busyHasher()
	d := a.checkedOn(startPw(t, envOpts{hasher: h, strategy: e.cfg.Session.Strategy,
		config: func(c *config.Config) { c.Cookies.Style = e.cfg.Cookies.Style }}))
	c, f := d.browser(), d.browser()
	jsonForm := url.Values{"csrfToken": {d.e.csrf(c)}, "email": {"pw@example.com"}, "password": {"nope nope"}, "json": {"true"}}
	form := url.Values{"csrfToken": {d.e.csrf(f)}, "email": {"pw@example.com"}, "password": {"nope nope"}}
	wait := holdSlot(t, h)
	res = d.e.post(c, "/callback/credentials", jsonForm)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, res.body)
	res = d.e.post(f, "/callback/credentials", form)
	require.Equal(t, http.StatusFound, res.StatusCode)
	wait()
	res = d.e.get(f, res.location())
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, http.StatusOK, d.e.get(f, res.location()).StatusCode)
}
