package app_test

import (
	"database/sql"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// passkeys drives the passkey routes: "not supported" on this instance
// (no webauthn provider), and every documented answer on one with a
// passkey provider (SERVICE_URL on localhost), whose checked answers count
// for this document.
func (a apiDriver) passkeys(strategy, style string) {
	a.e.do(a.browser(), a.request(http.MethodGet, "/webauthn-options/idp", "", "", unknownAction))
	require.Equal(a.e.t, http.StatusBadRequest, a.e.do(a.browser(), a.request(http.MethodGet, "/passkeys", "", "")).StatusCode)

	pt := a.e.t
	e := startPasskeys(pt, backend{strategy: strategy}, func(c *config.Config) { c.Cookies.Style = style })
	// The document names SERVICE_URL (localhost); requests go to the
	// listener's 127.0.0.1.
	doc := loadOpenAPI(pt, []byte(strings.ReplaceAll(e.get(e.browser(), "/openapi.json").body, e.origin, e.srv.URL)))
	pv := newAPIChecker(pt, doc, e.srv.URL)
	p := apiDriver{e: e, v: pv}

	c := p.browser()
	require.Equal(pt, http.StatusFound, e.get(c, "/passkeys").StatusCode)
	require.Equal(pt, http.StatusUnauthorized, e.get(c, "/webauthn-options/passkey?action=register").StatusCode)
	require.Equal(pt, http.StatusBadRequest, e.get(c, "/webauthn-options/passkey?action=bogus").StatusCode)
	e.do(c, p.request(http.MethodGet, "/webauthn-options/email", "", "", unknownAction))
	e.emailSignIn(c, "keys@example.com")
	k := e.newKey()
	e.addPasskey(c, k, "one")
	e.addPasskey(c, e.newKey(), "two")
	require.Equal(pt, http.StatusOK, e.get(c, "/passkeys").StatusCode)
	id := e.passkeysOf(e.onlyUser().ID)[0].ID
	tok := e.csrf(c)
	res := e.post(c, "/passkeys/rename", url.Values{"csrfToken": {tok}, "id": {id}, "name": {"laptop"}, "json": {"true"}})
	require.Equal(pt, http.StatusOK, res.StatusCode)
	huge := "csrfToken=" + strings.Repeat("a", 70<<10)
	for _, path := range []string{"/passkeys/rename", "/passkeys/remove"} {
		require.Equal(pt, http.StatusBadRequest, e.do(c, p.request(http.MethodPost, path, "csrfToken=%zz", "application/x-www-form-urlencoded", invalidRequest)).StatusCode)
		require.Equal(pt, http.StatusRequestEntityTooLarge, e.do(c, p.request(http.MethodPost, path, huge, "application/x-www-form-urlencoded")).StatusCode)
	}
	require.Equal(pt, http.StatusFound, e.post(c, "/passkeys/rename", url.Values{"csrfToken": {tok}, "id": {id}, "name": {"x"}}).StatusCode)
	require.Equal(pt, http.StatusOK, e.post(c, "/passkeys/remove", url.Values{"csrfToken": {tok}, "id": {id}, "json": {"true"}}).StatusCode)
	require.Equal(pt, http.StatusFound, e.post(c, "/passkeys/remove", url.Values{"csrfToken": {tok}, "id": {id}}).StatusCode)
	fresh := p.browser()
	require.Equal(pt, http.StatusFound, e.passkeySignIn(fresh, k).StatusCode)
	// The passkeys table gone (the session still reads): register
	// options answer the documented 503, never a 500.
	db, err := sql.Open("sqlite3", filepath.Join(e.cfg.DataDir, "latchkey.db"))
	require.NoError(pt, err)
	_, err = db.Exec("ALTER TABLE authenticators RENAME TO authenticators_gone")
	require.NoError(pt, err)
	require.NoError(pt, db.Close())
	require.Equal(pt, http.StatusServiceUnavailable, e.get(c, "/webauthn-options/passkey?action=register").StatusCode)
	// The page, a rename and a removal: the "try again later" page.
	require.Equal(pt, http.StatusServiceUnavailable, e.get(c, "/passkeys").StatusCode)
	for _, path := range []string{"/passkeys/rename", "/passkeys/remove"} {
		require.Equal(pt, http.StatusServiceUnavailable, e.post(c, path, url.Values{"csrfToken": {tok}, "id": {id}, "name": {"y"}}).StatusCode, path)
	}

	for k := range pv.statuses {
		a.v.statuses[k] = true
	}
	for k := range pv.seen {
		a.v.seen[k] = true
	}
}
