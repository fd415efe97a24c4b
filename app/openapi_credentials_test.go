package app_test

import (
	"net/http"
	"net/url"

	"github.com/stretchr/testify/require"
)

// credentials drives the password provider's answers through the checker:
// a sign-in (JSON mode), a refusal in JSON mode (401) and as a form (302),
// a JSON body, and the GET of its callback (400).
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
}
