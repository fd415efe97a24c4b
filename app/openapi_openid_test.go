package app_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
)

// With oidc.enabled the document lists the OpenID Provider's routes and
// the account's apps (and only then: they are mounted only then); each
// registered route is documented and each documented one registered. The
// provider's library is mounted for every method under {base}/oidc/* and
// at the discovery path: those count as documented when the document
// names a path below them.
func TestOpenAPIDocumentsOpenIDRoutes(t *testing.T) {
	e := startOP(t, backends()[0], nil)
	doc := loadOpenAPI(t, []byte(e.get(e.browser(), "/openapi.json").body))
	baseOps, _ := operations(doc)
	var registered []*regexp.Regexp
	for _, r := range app.RegisteredRoutes(e.app) {
		if r.Method == echo.RouteNotFound || !openAPIMethod[r.Method] {
			continue
		}
		p, ok := strings.CutPrefix(r.Path, e.path)
		if !ok {
			continue
		}
		if wild, ok := strings.CutSuffix(p, "*"); ok || p == "/.well-known/openid-configuration" {
			// The library's mount: documented through the paths below it.
			found := false
			for _, d := range baseOps {
				_, dp, _ := strings.Cut(d, " ")
				found = found || (ok && strings.HasPrefix(dp, wild)) || dp == p
			}
			require.True(t, found, "the library's mount %s has no documented path", r.Path)
			registered = append(registered, regexp.MustCompile("^[A-Z]+ "+regexp.QuoteMeta(wild)))
			continue
		}
		op := templated(r.Method + " " + p)
		found := false
		for _, d := range baseOps {
			found = found || templated(d) == op
		}
		require.True(t, found, "route %s %s is not in app/openapi/openapi.yaml", r.Method, r.Path)
		registered = append(registered, regexp.MustCompile("^"+strings.ReplaceAll(regexp.QuoteMeta(op), "\\{\\}", "[^/]+")+"$"))
	}
	for _, d := range baseOps {
		ok := false
		for _, r := range registered {
			ok = ok || r.MatchString(templated(d)) || r.MatchString(d)
		}
		require.True(t, ok, "%s is documented but not registered", d)
	}
	require.Len(t, openIDOps(doc), 16)
	for _, op := range openIDOps(doc) {
		require.Contains(t, baseOps, op)
	}

	off := startEnv(t, envOpts{ownURL: true})
	require.Empty(t, openIDOps(loadOpenAPI(t, []byte(off.get(off.browser(), "/openapi.json").body))), "oidc off: not served, not documented")
}

// openIDOps are the document's operations of the openid feature.
func openIDOps(doc *openapi3.T) []string {
	var ops []string
	for p, item := range doc.Paths.Map() {
		if item.Extensions["x-latchkey-feature"] != "openid" {
			continue
		}
		for method := range item.Operations() {
			ops = append(ops, method+" "+p)
		}
	}
	return ops
}

// openID drives the provider's routes on an instance of its own
// (startOP) through every answer the document lists for them, the
// failures of a closed database last. Its checker's findings join a.v's.
// TestOpenAPIMatchesRealResponses runs it in each session strategy and
// cookie style.
func (a apiDriver) openID() {
	style := func(c *config.Config) { c.Cookies.Style = a.e.cfg.Cookies.Style }
	oe := startOP(a.e.t, backend{name: a.e.cfg.Session.Strategy, strategy: a.e.cfg.Session.Strategy}, style)
	d := a.checkedOn(oe)
	d.openIDAnswers()
	d.v.requireCovered(a.e.t, openIDOps(d.v.doc))
}

func (a apiDriver) openIDAnswers() {
	e, t := a.e, a.e.t
	stale := strings.Repeat("0", 64)
	huge := "csrfToken=" + strings.Repeat("a", 70<<10)
	form := "application/x-www-form-urlencoded"
	r := e.relyingParty("app", rpSecret, "openid", "profile", "email", "groups", "offline_access")
	// The relying party's own calls (token, introspection, revocation) go
	// through the checker too.
	checked := context.WithValue(context.Background(), oauth2.HTTPClient, a.v.client(e.srv.Client()))
	post := func(p string, form url.Values, basic bool) resp {
		req := a.request(http.MethodPost, p, form.Encode(), "application/x-www-form-urlencoded")
		if basic {
			req.SetBasicAuth("app", rpSecret)
		}
		return e.do(a.browser(), req)
	}
	bearer := func(token string) resp {
		req := a.request(http.MethodGet, "/oidc/userinfo", "", "")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return e.do(a.browser(), req)
	}

	// Discovery and keys.
	c := a.browser()
	require.Equal(t, http.StatusOK, e.get(c, "/.well-known/openid-configuration").StatusCode)
	require.Equal(t, http.StatusOK, e.get(c, "/oidc/jwks").StatusCode)

	// Refused requests: an unknown client, a redirect_uri not registered
	// (400, never redirected to); an unknown request.
	require.Equal(t, http.StatusBadRequest, e.get(c, "/oidc/authorize?client_id=nope&response_type=code&scope=openid&redirect_uri=x").StatusCode)
	require.Equal(t, http.StatusBadRequest, e.get(c, "/oidc/authorize?client_id=app&response_type=code&scope=openid&redirect_uri=http%3A%2F%2Fevil.example%2F").StatusCode)
	require.Equal(t, http.StatusBadRequest, e.get(c, "/oidc/authorize/callback?id=0123").StatusCode)
	require.Equal(t, http.StatusBadRequest, e.get(c, "/oidc/continue?id=0123").StatusCode)

	// Signed out: to the sign-in page; prompt=none back with login_required.
	res, _ := r.authorize(c)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.body, "<form")
	res, az := r.authorize(c, "prompt", "none")
	require.Equal(t, "login_required", r.errorFrom(res, az))

	// Signed in: the consent page; a csrfToken mismatch back to it; allow.
	s := a.v.client(e.signedIn("ada@example.com"))
	page, az := r.authorize(s)
	require.Equal(t, http.StatusOK, page.StatusCode)
	id := regexpFind(t, page.body, `name="id" value="([0-9a-f]+)"`)
	res = e.post(s, "/oidc/consent", url.Values{"csrfToken": {stale}, "id": {id}, "decision": {"allow"}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "/oidc/continue?id="+id)
	res = e.consent(s, page, "allow")
	code := r.codeFrom(res, az)
	require.Equal(t, http.StatusBadRequest, e.post(s, "/oidc/consent", url.Values{"csrfToken": {e.csrf(s)}, "id": {id}, "decision": {"allow"}}).StatusCode, "done already")
	e.csrf(s)
	require.Equal(t, http.StatusRequestEntityTooLarge, e.do(s, a.request(http.MethodPost, "/oidc/consent", huge, form)).StatusCode)

	// The token endpoint: the code, its replay, a wrong secret, no grant.
	tok, err := r.oauth.Exchange(checked, code, oauth2.VerifierOption(az.verifier))
	require.NoError(t, err)
	res = post("/oidc/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {"app"}, "client_secret": {"wrong"}}, false)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
	res = e.do(a.browser(), withHeader(a.request(http.MethodPost, "/oidc/token", "", form, invalidRequest), "Authorization", "Basic YXBwOng="))
	require.Equal(t, http.StatusBadRequest, res.StatusCode, res.body)
	fresh, err := r.oauth.TokenSource(checked, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	require.NoError(t, err)

	// userinfo, introspection, revocation.
	require.Equal(t, http.StatusOK, bearer(fresh.AccessToken).StatusCode)
	require.Equal(t, http.StatusUnauthorized, bearer("").StatusCode)
	res = post("/oidc/introspect", url.Values{"token": {fresh.AccessToken}}, true)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, true, res.json(t)["active"])
	require.Equal(t, http.StatusUnauthorized, post("/oidc/introspect", url.Values{"token": {fresh.AccessToken}}, false).StatusCode)
	require.Equal(t, http.StatusOK, post("/oidc/revoke", url.Values{"token": {fresh.AccessToken}, "token_type_hint": {"access_token"}}, true).StatusCode)
	require.Equal(t, http.StatusUnauthorized, bearer(fresh.AccessToken).StatusCode, "revoked")
	require.Equal(t, http.StatusUnauthorized, post("/oidc/revoke", url.Values{"token": {fresh.AccessToken}}, false).StatusCode)
	// The code again: refused, and the tokens issued from it revoked.
	_, err = r.oauth.Exchange(checked, code, oauth2.VerifierOption(az.verifier))
	require.ErrorContains(t, err, "invalid_grant")
	res = post("/oidc/introspect", url.Values{"token": {fresh.RefreshToken}}, true)
	require.Equal(t, false, res.json(t)["active"])

	// The account's apps: listed, revoked (JSON, then a form: not found).
	require.Equal(t, http.StatusUnauthorized, e.get(a.browser(), "/list-apps").StatusCode)
	res = e.get(s, "/list-apps")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.body, `"clientId":"app"`)
	out := a.browser()
	require.Equal(t, http.StatusUnauthorized, e.post(out, "/revoke-app", url.Values{"csrfToken": {e.csrf(out)}, "clientId": {"app"}, "json": {"true"}}).StatusCode)
	require.Equal(t, http.StatusForbidden, e.post(s, "/revoke-app", url.Values{"csrfToken": {stale}, "clientId": {"app"}, "json": {"true"}}).StatusCode)
	require.Equal(t, http.StatusOK, e.post(s, "/revoke-app", url.Values{"csrfToken": {e.csrf(s)}, "clientId": {"app"}, "json": {"true"}}).StatusCode)
	require.Equal(t, http.StatusNotFound, e.post(s, "/revoke-app", url.Values{"csrfToken": {e.csrf(s)}, "clientId": {"app"}, "json": {"true"}}).StatusCode)
	res = e.post(s, "/revoke-app", url.Values{"csrfToken": {e.csrf(s)}, "clientId": {"app"}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.location(), "error=AppNotFound")
	require.Equal(t, http.StatusBadRequest, e.do(s, a.request(http.MethodPost, "/revoke-app", "csrfToken=%zz", form, invalidRequest)).StatusCode)
	require.Equal(t, http.StatusRequestEntityTooLarge, e.do(s, a.request(http.MethodPost, "/revoke-app", huge, form)).StatusCode)

	// RP-initiated logout: the confirm page (no id_token_hint), a
	// csrfToken mismatch, the button; a stale request.
	tool := e.relyingParty("tool", rpSecret)
	res, az = tool.authorize(s) // first-party: no consent page
	tt, err := tool.oauth.Exchange(checked, tool.codeFrom(res, az), oauth2.VerifierOption(az.verifier))
	require.NoError(t, err)
	res = e.follow(s, "/oidc/end_session?client_id=app&post_logout_redirect_uri="+url.QueryEscape(rpLogout)+"&state=x")
	require.Equal(t, http.StatusOK, res.StatusCode, res.body)
	logout := regexpFind(t, res.body, `name="logout" value="([^"]+)"`)
	require.Equal(t, http.StatusFound, e.post(s, "/oidc/logout", url.Values{"csrfToken": {stale}, "logout": {logout}}).StatusCode)
	e.csrf(s)
	require.Equal(t, http.StatusRequestEntityTooLarge, e.do(s, a.request(http.MethodPost, "/oidc/logout", huge, form)).StatusCode)
	res = e.post(s, "/oidc/logout", url.Values{"csrfToken": {e.csrf(s)}, "logout": {logout}, "decision": {"stay"}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "ada@example.com", userEmail(e.session(s)), "stay: still signed in")
	res = e.post(s, "/oidc/logout", url.Values{"csrfToken": {e.csrf(s)}, "logout": {logout}, "decision": {"signout"}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.True(t, strings.HasPrefix(res.location(), rpLogout), res.location())
	require.Equal(t, map[string]any{}, e.session(s))
	require.Equal(t, http.StatusBadRequest, e.post(s, "/oidc/logout", url.Values{"csrfToken": {e.csrf(s)}, "logout": {"forged"}}).StatusCode)
	require.Equal(t, http.StatusBadRequest, e.get(s, "/oidc/logout?logout=forged").StatusCode)
	// With an id_token_hint naming the signed-in user: at once (posted).
	s2 := a.v.client(e.signedIn("ada@example.com"))
	res, az = tool.authorize(s2)
	tt, err = tool.oauth.Exchange(checked, tool.codeFrom(res, az), oauth2.VerifierOption(az.verifier))
	require.NoError(t, err)
	res = e.post(s2, "/oidc/end_session", url.Values{"id_token_hint": {tt.Extra("id_token").(string)}, "post_logout_redirect_uri": {rpLogout}})
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	res = e.follow(s2, res.location())
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.True(t, strings.HasPrefix(res.location(), rpLogout), res.location())
	require.Equal(t, map[string]any{}, e.session(s2))
	require.Equal(t, http.StatusBadRequest, e.get(s2, "/oidc/end_session?client_id=app&post_logout_redirect_uri=http%3A%2F%2Fevil.example%2F").StatusCode)
	require.Equal(t, http.StatusBadRequest, e.post(s2, "/oidc/end_session", url.Values{"client_id": {"app"}, "post_logout_redirect_uri": {"http://evil.example/"}}).StatusCode)

	// A value that is not text (a NUL byte) is refused where it comes in;
	// bodies over max_body_bytes get 413 on the endpoints too.
	bad := func(method, target, body string) int {
		return e.do(s, a.request(method, target, body, form)).StatusCode
	}
	for _, target := range []string{"/oidc/continue?id=%00", "/oidc/authorize/callback?id=%00", "/oidc/logout?logout=%00",
		"/oidc/end_session?client_id=%00", "/oidc/end_session?state=%zz", "/oidc/authorize?client_id=app&response_type=code&scope=openid&redirect_uri=" + url.QueryEscape(rpRedirect) + "&state=%00",
		"/oidc/authorize?client_id=app&response_type=code&scope=openid&redirect_uri=" + url.QueryEscape(rpRedirect) + "&state=" + strings.Repeat("s", 2049)} {
		require.Equal(t, http.StatusBadRequest, bad(http.MethodGet, target, ""), target)
	}
	require.Equal(t, http.StatusBadRequest, bad(http.MethodPost, "/oidc/consent", "csrfToken="+e.csrf(s)+"&decision=allow&id=%00"))
	require.Equal(t, http.StatusBadRequest, bad(http.MethodPost, "/revoke-app", "csrfToken="+e.csrf(s)+"&clientId=%00"))
	for _, p := range []string{"/oidc/token", "/oidc/revoke", "/oidc/introspect", "/oidc/end_session"} {
		require.Equal(t, http.StatusBadRequest, bad(http.MethodPost, p, "client_id=%00&token=x&grant_type=refresh_token"), p)
		require.Equal(t, http.StatusRequestEntityTooLarge, bad(http.MethodPost, p, huge), p)
	}

	// The database gone: 503 pages, never a 500.
	require.NoError(t, e.app.Store().Close())
	require.Equal(t, http.StatusServiceUnavailable, e.get(a.browser(), "/oidc/continue?id=0123").StatusCode)
	require.Equal(t, http.StatusServiceUnavailable, e.get(a.browser(), "/oidc/authorize/callback?id=0123").StatusCode)
}
