package app_test

// The OpenAPI document (app/openapi/openapi.yaml, served at
// {base}/openapi.json) cannot drift from the service: it is valid OpenAPI
// 3.1, it lists exactly the routes echo serves, and real answers of a
// running instance match it (openapi_check_test.go).

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/app/openapi"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/web"
)

// The source and a rendered copy are valid OpenAPI 3.1; the copy names the
// instance's URLs and cookies; every operation carries a declared tag, and
// the root-level ones are marked operator or forward-auth.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	src := loadOpenAPI(t, openapi.Source)

	rendered, err := openapi.Render(openapi.Instance{
		BaseURL: "https://ex.com/idp/auth",
		Origin:  "https://ex.com",
		Cookies: map[string]string{
			"session-token": "__Secure-authjs.session-token", "csrf-token": "__Host-authjs.csrf-token",
			"callback-url": "__Secure-authjs.callback-url", "oauth-check": "__Secure-authjs.oauth-check",
			"email-binding": "__Secure-authjs.email-binding", "challenge": "__Secure-authjs.challenge",
			"second-step": "__Secure-authjs.second-step", "device": "__Secure-authjs.two-factor-device",
			"password-device": "__Secure-authjs.password-device",
		},
		Features: map[string]bool{"two-factor": true, "openid": true},
	})
	require.NoError(t, err)
	doc := loadOpenAPI(t, rendered)
	require.Equal(t, "https://ex.com/idp/auth", doc.Servers[0].URL)
	require.Equal(t, "https://ex.com", doc.Paths.Value("/health/live").Servers[0].URL)
	require.Equal(t, "__Secure-authjs.session-token", doc.Components.SecuritySchemes["sessionCookie"].Value.Name)
	require.Equal(t, "__Host-authjs.csrf-token", doc.Components.Parameters["CsrfCookie"].Value.Name)
	require.Equal(t, "__Secure-authjs.email-binding", doc.Components.Parameters["EmailBindingCookie"].Value.Name)
	require.Equal(t, "__Secure-authjs.second-step", doc.Components.Parameters["SecondStepCookie"].Value.Name)
	srcBase, srcRoot := operations(src)
	base, root := operations(doc)
	require.Equal(t, srcBase, base)
	require.Equal(t, srcRoot, root)
	require.True(t, bytes.HasPrefix(rendered, []byte(`{"openapi":"3.1.0","info":`)), "source key order is kept")

	_, err = openapi.Render(openapi.Instance{BaseURL: "http://x/api/auth", Origin: "http://x"})
	require.ErrorContains(t, err, `no cookie for x-latchkey-cookie`, "a cookie the instance lacks fails start-up")

	declared := map[string]bool{}
	for _, tag := range doc.Tags {
		declared[tag.Name] = true
	}
	for p, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			require.NotEmpty(t, op.Tags, "%s %s", method, p)
			for _, tag := range op.Tags {
				require.True(t, declared[tag], "%s %s: tag %s is not declared", method, p, tag)
			}
			operatorTag := op.Tags[0] == "operator" || op.Tags[0] == "forward-auth"
			require.Equal(t, len(item.Servers) > 0, operatorTag, "%s %s: root-level paths and only they are operator/forward-auth", method, p)
		}
	}
}

// Every route echo registers is documented, and every documented route below
// the base path is registered, at the default and at a custom base path.
// Root-level operator and forward-auth paths that no handler answers yet
// (404) are skipped, and enforced from the moment one does.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	for _, basePath := range []string{"/api/auth", "/custom/auth"} {
		t.Run(basePath, func(t *testing.T) {
			e := startEnv(t, envOpts{ownURL: true, config: func(c *config.Config) {
				c.ServiceURL = strings.Replace(c.ServiceURL, "/api/auth", basePath, 1)
			}})
			res := e.get(e.browser(), "/openapi.json")
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Empty(t, res.Header.Values("Set-Cookie"), "no cookies on /openapi.json")
			doc := loadOpenAPI(t, []byte(res.body))
			require.Equal(t, e.srv.URL+basePath, doc.Servers[0].URL, "the served document names this instance")
			require.Equal(t, e.base, doc.Servers[0].URL)

			baseOps, rootOps := operations(doc)
			documented := map[string]bool{}
			for _, op := range baseOps {
				documented[templated(op)] = true
			}
			for _, op := range rootOps {
				documented[templated(op)] = true
			}
			registered := map[string]bool{}
			for _, r := range app.RegisteredRoutes(e.app) {
				if r.Method == echo.RouteNotFound || !openAPIMethod[r.Method] {
					// A fallback for misses is no route a client calls;
					// echo's Any also registers CONNECT, PROPFIND and
					// REPORT, which an OpenAPI 3.1 path item cannot name.
					continue
				}
				p := r.Path
				if rest, ok := strings.CutPrefix(p, e.path); ok && (rest == "" || rest[0] == '/') {
					p = rest
				}
				op := templated(r.Method + " " + p)
				registered[op] = true
				require.True(t, documented[op], "route %s %s is not in app/openapi/openapi.yaml", r.Method, r.Path)
			}
			for _, op := range baseOps {
				require.True(t, registered[templated(op)], "%s is documented but not registered", op)
			}
			for _, op := range rootOps {
				if registered[templated(op)] {
					continue
				}
				method, p, _ := strings.Cut(op, " ")
				switch status := e.rootStatus(method, p); status {
				case http.StatusNotFound:
					t.Logf("%s is documented but not served yet: skipped until it is", op)
				case http.StatusMethodNotAllowed:
					t.Errorf("%s is documented, but the path does not answer %s", op, method)
				}
			}
		})
	}
}

// openAPIMethod: the methods an OpenAPI 3.1 path item has a field for.
var openAPIMethod = map[string]bool{
	http.MethodGet: true, http.MethodPut: true, http.MethodPost: true, http.MethodDelete: true,
	http.MethodOptions: true, http.MethodHead: true, http.MethodPatch: true, http.MethodTrace: true,
}

// templated writes "METHOD /a/:x/*" and "METHOD /a/{x}/{y}" alike.
func templated(op string) string { return pathParam.ReplaceAllString(op, "{}") }

var pathParam = regexp.MustCompile(`:[^/]+|\*|\{[^}]+\}`)

// rootStatus is the status of method on path at the root of the listener.
func (e *env) rootStatus(method, path string) int {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, nil)
	require.NoError(e.t, err)
	return e.do(e.browser(), req).StatusCode
}

// Real answers match the document: every operation below the base path,
// signed out and signed in, in both session strategies and both cookie
// styles, with every documented status driven at least once; the
// operator and forward-auth endpoints as soon as they are served.
func TestOpenAPIMatchesRealResponses(t *testing.T) {
	for _, tc := range []struct{ strategy, style string }{
		{config.StrategyDatabase, config.StyleNextAuth},
		{config.StrategyJWT, config.StyleNextAuth},
		{config.StrategyJWT, config.StyleAuthJS},
	} {
		t.Run(tc.strategy+"-"+tc.style, func(t *testing.T) {
			e := startEnv(t, envOpts{smtp: &smtptest.Options{}, strategy: tc.strategy}.oidc(func(c *config.Config) {
				c.Cookies.Style = tc.style
				c.Callbacks.ExposeUserID = true
				c.TrustedProxies = []string{"127.0.0.1/32"} // forward-auth believes the test's X-Forwarded-*
				c.Providers = append(c.Providers, config.Provider{Type: config.TypeCredentials, ID: "credentials"})
			}, nil))
			res := e.get(e.browser(), "/openapi.json")
			require.Equal(t, http.StatusOK, res.StatusCode)
			doc := loadOpenAPI(t, []byte(res.body))
			v := newAPIChecker(t, doc, e.srv.URL)
			a := apiDriver{e: e, v: v}
			a.signedOut()
			a.oauth()
			a.email()
			a.credentials()
			a.badBodies()
			a.unknownActions()
			a.passwords()
			a.operator(doc)
			a.passkeys(tc.strategy, tc.style)
			a.twoFactor()
			a.openID()
			a.account()
			a.tokens()

			pe := startEnv(t, envOpts{ownURL: true, strategy: tc.strategy, config: func(c *config.Config) {
				c.Cookies.Style = tc.style
				c.Pages = config.Pages{SignIn: "/login", SignOut: "/bye", Error: "/oops", VerifyRequest: "/check-mail"}
			}})
			pv := newAPIChecker(t, loadOpenAPI(t, []byte(pe.get(pe.browser(), "/openapi.json").body)), pe.srv.URL)
			apiDriver{e: pe, v: pv}.customPages()
			for k := range pv.statuses {
				v.statuses[k] = true
			}
			for k := range sessionOutage(t, tc.style) {
				v.statuses[k] = true
			}

			baseOps, rootOps := operations(doc)
			for _, op := range baseOps {
				require.True(t, v.seen[op], "%s: no real answer checked", op)
			}
			for _, op := range rootOps {
				method, p, _ := strings.Cut(op, " ")
				if e.rootStatus(method, p) != http.StatusNotFound {
					require.True(t, v.seen[op], "%s is served: its real answers must be checked", op)
				}
			}
			for _, s := range documentedStatuses(doc, baseOps) {
				require.True(t, v.statuses[s], "%s: documented but never answered", s)
			}
			require.True(t, v.seen["not supported"])
		})
	}
}

// apiDriver sends a running instance the requests of a real client through
// the checker.
type apiDriver struct {
	e *env
	v *apiChecker
}

// browser is a fresh browser whose traffic is checked; it stops at redirects.
func (a apiDriver) browser() *http.Client { return a.v.client(a.e.browser()) }

// following is a fresh checked browser that follows redirects through
// latchkey and the IdP.
func (a apiDriver) following() *http.Client { return a.v.client(a.e.following(a.e.browser())) }

func (a apiDriver) request(method, target string, body string, contentType string, marks ...checkMark) *http.Request {
	req, err := http.NewRequest(method, a.e.url(target), strings.NewReader(body))
	require.NoError(a.e.t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, m := range marks {
		req = marked(req, m)
	}
	return req
}

func (a apiDriver) signedOut() {
	e, t := a.e, a.e.t
	c := a.browser()
	for _, target := range []string{
		"/openapi.json", "/csrf", "/providers", "/session",
		"/signin", "/signin?error=OAuthSignin&callbackUrl=/dash&email=a@example.com", "/signin/idp",
		"/signout", "/signout?csrf=true", "/verify-request?provider=email&type=email",
		"/error", "/error?error=AccessDenied", "/error?error=Verification", "/error?error=Configuration",
		"/error?error=configuration", "/error?error=Unknown", "/error?error=OAuthCallback",
		"/static/style.css", "/static/dark.css", "/static/logo.svg", "/static/nothing.css", "/theme.css",
	} {
		e.get(c, target)
	}
	require.Equal(t, map[string]any{}, e.session(c))
	// The served document names this instance's cookies.
	params := a.v.doc.Components.Parameters
	res := e.get(a.browser(), "/csrf")
	var set []string
	for _, sc := range setCookies(res.Header) {
		set = append(set, sc.Name)
	}
	require.ElementsMatch(t, []string{params["CsrfCookie"].Value.Name, params["CallbackUrlCookie"].Value.Name}, set)
	res = e.post(c, "/_log", url.Values{"level": {"error"}, "code": {"CLIENT_FETCH_ERROR"}})
	require.Equal(t, http.StatusOK, res.StatusCode)

	// CSRF mismatches: the retry redirect, in all three modes.
	e.csrf(c)
	for _, p := range []string{"/signin/idp", "/signin/email", "/signout", "/signout/all"} {
		bad := url.Values{"csrfToken": {strings.Repeat("0", 64)}, "callbackUrl": {"/x"}}
		require.Equal(t, http.StatusFound, e.post(c, p, bad).StatusCode)
		bad.Set("json", "true")
		require.Equal(t, http.StatusOK, e.post(c, p, bad).StatusCode)
		bad.Del("json")
		res := e.post(c, p, bad, "X-Auth-Return-Redirect", "1")
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.True(t, strings.HasSuffix(res.location(), "?csrf=true"), res.location())
	}
	res = e.do(c, a.request(http.MethodPost, "/session", `{"csrfToken":"nope","data":{}}`, "application/json"))
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Equal(t, "{}", strings.TrimSpace(res.body))

	// An unknown provider: the sign-in retry redirect; a callback's 400.
	res = e.signIn(c, "nope", "/x")
	require.Equal(t, e.base+"/signin?csrf=true", res.location())
	require.Equal(t, http.StatusBadRequest, e.get(c, "/callback/nope?code=x").StatusCode)
	tok := e.csrf(c)
	require.Equal(t, http.StatusBadRequest, e.post(c, "/callback/nope", url.Values{"csrfToken": {tok}}).StatusCode)

	// Signed-out sign-out and session update.
	tok = e.csrf(c)
	require.Equal(t, http.StatusFound, e.post(c, "/signout", url.Values{"csrfToken": {tok}}).StatusCode)
	res = e.do(c, a.request(http.MethodPost, "/session", `{"csrfToken":"`+tok+`","data":{}}`, "application/json"))
	require.Equal(t, http.StatusOK, res.StatusCode)
}

func (a apiDriver) oauth() {
	e, t := a.e, a.e.t
	// Starting a sign-in: a redirect to the IdP, or its URL in JSON mode,
	// with authorization parameters from the query.
	c := a.browser()
	tok := e.csrf(c)
	res := e.post(c, "/signin/idp?prompt=login", url.Values{"csrfToken": {tok}, "callbackUrl": {"/dash"}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.True(t, strings.HasPrefix(res.location(), e.idp.Issuer()), res.location())
	res = e.post(c, "/signin/idp", url.Values{"csrfToken": {tok}, "json": {"true"}})
	require.Equal(t, http.StatusOK, res.StatusCode)

	// Callback errors: the IdP refused (also as JSON for the v5 header);
	// no check cookie; a form_post with cookies but a wrong state; one
	// without cookies is bounced to the GET callback.
	e.requireError(e.get(c, "/callback/idp?error=access_denied"), "Callback")
	res = e.do(c, withHeader(a.request(http.MethodGet, "/callback/idp?error=access_denied", "", ""), "X-Auth-Return-Redirect", "1"))
	require.Equal(t, http.StatusOK, res.StatusCode)
	e.requireError(e.get(c, "/callback/idp?code=x&state=y"), "OAuthCallback")
	e.requireError(e.post(c, "/callback/idp", url.Values{"code": {"x"}, "state": {"y"}}), "OAuthCallback")
	res = e.post(c, "/callback/idp", url.Values{"code": {"x"}, "state": {"y"}, "json": {"true"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	res = e.do(a.browser(), a.request(http.MethodPost, "/callback/idp", "code=x&state=y", "application/x-www-form-urlencoded"))
	require.Equal(t, http.StatusSeeOther, res.StatusCode)

	// A whole sign-in, then the signed-in routes and sign-outs.
	f := a.following()
	e.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-api", Email: "api@example.com", PreferredUsername: "api"})
	res = e.signIn(f, "idp", "/dash")
	require.Equal(t, e.origin+"/dash", res.location())
	a.signedIn(f, "api@example.com")
}

// signedIn drives the session routes and the sign-outs of a signed-in browser.
func (a apiDriver) signedIn(c *http.Client, address string) {
	e, t := a.e, a.e.t
	require.Equal(t, address, userEmail(e.session(c)))
	_, ok := e.jarCookie(c, a.v.doc.Components.SecuritySchemes["sessionCookie"].Value.Name)
	require.True(t, ok, "the session cookie has the documented name")
	e.get(c, "/csrf")
	tok := e.csrf(c)
	res := e.do(c, a.request(http.MethodPost, "/session", `{"csrfToken":"`+tok+`","data":{"name":"New"}}`, "application/json"))
	require.Equal(t, http.StatusOK, res.StatusCode)
	res = e.do(c, a.request(http.MethodPost, "/session", url.Values{"csrfToken": {tok}}.Encode(), "application/x-www-form-urlencoded"))
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, address, userEmail(res.json(t)))

	res = e.post(c, "/signout/all", url.Values{"csrfToken": {tok}, "callbackUrl": {"/bye"}, "json": {"true"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, map[string]any{}, e.session(c))
	res = e.post(c, "/signout", url.Values{"csrfToken": {tok}}, "X-Auth-Return-Redirect", "1")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, http.StatusFound, e.post(c, "/signout/all", url.Values{"csrfToken": {tok}}).StatusCode)
	require.Equal(t, http.StatusOK, e.post(c, "/signout", url.Values{"csrfToken": {tok}, "json": {"true"}}).StatusCode)
}

func (a apiDriver) email() {
	e, t := a.e, a.e.t
	asker := a.browser()
	// JSON mode of the e-mail sign-in, then a link opened elsewhere: the
	// confirm page, its button with a stale token (403) and with the page's.
	tok := e.csrf(asker)
	res := e.post(asker, "/signin/email", url.Values{"csrfToken": {tok}, "email": {"one@example.com"}, "json": {"true"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	link := e.link(1)
	other := a.browser()
	page := e.get(other, link)
	require.Equal(t, http.StatusOK, page.StatusCode)
	q := linkQuery(t, link)
	stale := url.Values{"csrfToken": {strings.Repeat("0", 64)}, "token": {q.Get("token")}, "email": {q.Get("email")}}
	require.Equal(t, http.StatusForbidden, e.post(other, "/callback/email", stale).StatusCode)
	res = e.confirmLink(other, link)
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "one@example.com", userEmail(e.session(other)))

	// A spent link, a link without a token, then a link opened where it was
	// asked for: signed in at once.
	e.requireError(e.get(a.browser(), link), "Verification")
	e.requireError(e.get(a.browser(), "/callback/email?email=x%40example.com"), "configuration")
	link = e.emailLink(asker, "two@example.com", e.origin+"/home")
	res = e.get(asker, link)
	require.Equal(t, e.origin+"/home", res.location())
	a.signedIn(asker, "two@example.com")
}

// badBodies: every POST that reads a body answers 400 to a malformed one and
// 413 to one over max_body_bytes.
func (a apiDriver) badBodies() {
	e, t := a.e, a.e.t
	c := a.browser()
	e.csrf(c)
	huge := "csrfToken=" + strings.Repeat("a", 70<<10)
	for _, p := range []string{"/session", "/signin/idp", "/signin/email", "/callback/idp", "/callback/email", "/signout", "/signout/all"} {
		res := e.do(c, a.request(http.MethodPost, p, "csrfToken=%zz", "application/x-www-form-urlencoded", invalidRequest))
		require.Equal(t, http.StatusBadRequest, res.StatusCode, p)
		res = e.do(c, a.request(http.MethodPost, p, huge, "application/x-www-form-urlencoded"))
		require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, p)
	}
	res := e.do(c, a.request(http.MethodPost, "/session", "{", "application/json", invalidRequest))
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
}

// unknownActions answer next-auth's 400 "not supported".
func (a apiDriver) unknownActions() {
	e := a.e
	c := a.browser()
	for _, r := range []struct{ method, target string }{
		{http.MethodGet, "/nope"}, {http.MethodPost, "/nope"}, {http.MethodPut, "/session"},
		{http.MethodDelete, "/csrf"}, {http.MethodOptions, "/session"}, {http.MethodHead, "/session"},
		{http.MethodGet, ""}, {http.MethodGet, "/signout/all"},
	} {
		e.do(c, a.request(r.method, r.target, "", "", unknownAction))
	}
}

// operator drives the root-level endpoints that are served (health checks,
// forward-auth), every documented method, signed out and signed in.
func (a apiDriver) operator(doc *openapi3.T) {
	e := a.e
	_, rootOps := operations(doc)
	var signedIn *http.Client
	for _, op := range rootOps {
		method, p, _ := strings.Cut(op, " ")
		if e.rootStatus(method, p) == http.StatusNotFound {
			continue // not served yet (TestOpenAPIDocumentsEveryRoute says so)
		}
		clients := []*http.Client{a.browser()}
		if strings.HasPrefix(p, "/authz/") {
			if signedIn == nil {
				f := a.following()
				e.idp.QueueUser(&mockoidc.MockUser{Subject: "sub-fwd", Email: "fwd@example.com", PreferredUsername: "fwd"})
				e.signIn(f, "idp", "/")
				signedIn = a.v.client(noRedirects(f))
			}
			clients = append(clients, signedIn)
		}
		for _, c := range clients {
			e.do(c, a.request(method, e.srv.URL+p, "", ""))
			req := a.request(method, e.srv.URL+p, "", "")
			req.Header.Set("X-Forwarded-Proto", "http")
			req.Header.Set("X-Forwarded-Host", strings.TrimPrefix(e.origin, "http://"))
			req.Header.Set("X-Forwarded-Uri", "/app/page")
			e.do(c, req)
		}
	}
}

// customPages: with pages.* configured, the pages redirect there.
func (a apiDriver) customPages() {
	e, t := a.e, a.e.t
	c := a.browser()
	for _, target := range []string{"/signin?error=OAuthSignin", "/signin/x", "/signout", "/verify-request", "/error?error=AccessDenied"} {
		res := e.get(c, target)
		require.Equal(t, http.StatusFound, res.StatusCode, target)
	}
}

func withHeader(req *http.Request, name, value string) *http.Request {
	req.Header.Set(name, value)
	return req
}

// sessionOutage is GET /session's answer to a database that fails under a
// signed-in database session (a JWT needs no database, so every run checks
// it on a database-strategy instance): the documented 503 with
// Retry-After, never {}, and the cookie kept. The same instance, whose
// password hasher never gets a slot, first drives the account pages' busy
// answers (hashingBusy: one instance for both checks, tests are costly).
// It returns the statuses the checker saw.
func sessionOutage(t *testing.T, style string) map[string]bool {
	e := startEnv(t, envOpts{ownURL: true, smtp: &smtptest.Options{}, strategy: config.StrategyDatabase,
		hasher: password.Default().Limit(0, time.Millisecond), config: func(c *config.Config) {
			c.Cookies.Style = style
			c.Session.CacheTTL = 0 // every GET /session asks the database
			c.Providers = append(c.Providers, config.Provider{Type: config.TypeCredentials, ID: "credentials"})
		}})
	v := newAPIChecker(t, loadOpenAPI(t, []byte(e.get(e.browser(), "/openapi.json").body)), e.srv.URL)
	hashingBusy(apiDriver{e: e, v: v})
	c := apiDriver{e: e, v: v}.browser()
	e.signInByLink(c, "outage@example.com")
	require.NotEmpty(t, e.session(c))
	require.NoError(t, e.app.Store().Close())
	res := e.get(c, "/session")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, res.body)
	require.Equal(t, web.RetryAfter, res.Header.Get("Retry-After"))
	require.Empty(t, res.Header.Values("Set-Cookie"), "the cookie is kept")
	return v.statuses
}
