package app_test

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// cspDirectives splits a Content-Security-Policy header into its directives,
// each a list of source expressions.
func cspDirectives(t *testing.T, header string) map[string][]string {
	t.Helper()
	require.NotEmpty(t, header, "Content-Security-Policy is missing")
	out := map[string][]string{}
	for _, d := range strings.Split(header, ";") {
		f := strings.Fields(d)
		if len(f) == 0 {
			continue
		}
		_, dup := out[f[0]]
		require.False(t, dup, "directive %s twice in %q", f[0], header)
		out[f[0]] = f[1:]
	}
	return out
}

// requireFramingHeaders: the headers every response carries, whatever its
// type, and on every answer but JSON a Referrer-Policy and a
// Content-Security-Policy that no site may frame. A JSON answer has neither:
// it renders and requests nothing, nosniff and X-Frame-Options: DENY are
// all it needs, and each header name less keeps GET /session's and /csrf's
// header maps small (documentPolicy).
func requireFramingHeaders(t *testing.T, what string, res resp) {
	t.Helper()
	require.Equal(t, "DENY", res.Header.Get("X-Frame-Options"), what)
	require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), what)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		require.Empty(t, res.Header.Values("Referrer-Policy"), what)
		require.Empty(t, res.Header.Values("Content-Security-Policy"), what)
		return
	}
	require.Equal(t, []string{"no-referrer"}, res.Header.Values("Referrer-Policy"), what)
	require.Contains(t, cspDirectives(t, res.Header.Get("Content-Security-Policy"))["frame-ancestors"], "'none'", what)
}

// requirePagePolicy: a page may load its stylesheet (and a same-origin
// favicon) and nothing else, may not be framed or re-based, and its forms may
// only go to formAction.
func requirePagePolicy(t *testing.T, what string, res resp, formAction ...string) {
	t.Helper()
	requireFramingHeaders(t, what, res)
	d := cspDirectives(t, res.Header.Get("Content-Security-Policy"))
	require.Equal(t, []string{"'none'"}, d["default-src"], what)
	require.Equal(t, []string{"'self'"}, d["style-src"], what)
	require.Equal(t, []string{"'self'"}, d["img-src"], what)
	require.Equal(t, []string{"'none'"}, d["base-uri"], what)
	require.Equal(t, []string{"'none'"}, d["frame-ancestors"], what)
	require.ElementsMatch(t, formAction, d["form-action"], what)
	require.NotContains(t, res.Header.Get("Content-Security-Policy"), "unsafe", what)

	// Nothing on the page needs more than that: no inline style or script.
	p := parsePage(t, res.body)
	require.Empty(t, p.elements("script"), what)
	require.Empty(t, p.elements("style"), what)
	walkHTML(p.doc, func(n *html.Node) {
		_, inline := htmlAttr(n, "style")
		require.False(t, inline, "%s: inline style attribute on <%s>", what, n.Data)
	})
}

// Every page is shielded from framing (clickjacking the sign-in and sign-out
// buttons), from loading anything but its own stylesheet, and from sending
// form data anywhere but latchkey, the IdPs and the allowed redirect
// origins; every other answer, JSON and errors included, carries the
// framing, sniffing and referrer headers too (and, but for JSON, the CSP).
func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	e := startEnv(t, envOpts{ownURL: true, idp: true, smtp: &smtptest.Options{},
		email: func(p *config.Provider) { p.Confirm = true }})
	idp := originOf(t, e.idp.Issuer())
	formAction := []string{"'self'", e.origin, idp}
	link := e.emailLink(e.browser(), "a@example.com", e.origin+"/")

	for _, page := range []struct {
		path   string
		status int
	}{
		{"/signin", http.StatusOK},
		{"/signin?error=OAuthSignin", http.StatusOK},
		{"/signout", http.StatusOK},
		{"/error?error=Verification", http.StatusForbidden},
		{"/error?error=Configuration", http.StatusInternalServerError},
		{"/verify-request?provider=email&type=email", http.StatusOK},
		{link, http.StatusOK}, // confirm: true
	} {
		res := e.get(e.client, page.path)
		requireHTML(t, res, page.status)
		requirePagePolicy(t, page.path, res, formAction...)
	}

	tok := e.csrf(e.client)
	for _, r := range []struct {
		what string
		res  resp
	}{
		{"GET /csrf", e.get(e.client, "/csrf")},
		{"GET /session", e.get(e.client, "/session")},
		{"GET /providers", e.get(e.client, "/providers")},
		{"POST /session", e.post(e.client, "/session", url.Values{"csrfToken": {tok}})},
		{"POST /signin/idp json", e.post(e.client, "/signin/idp", url.Values{"csrfToken": {tok}, "json": {"true"}})},
		{"POST /signin/idp", e.post(noRedirects(e.client), "/signin/idp", url.Values{"csrfToken": {tok}})},
		{"POST /signout bad CSRF", e.post(e.client, "/signout", url.Values{"csrfToken": {"x"}})},
		{"POST /_log", e.post(e.client, "/_log", url.Values{})},
		{"GET /static/style.css", e.get(e.client, "/static/style.css")},
		{"GET /static/missing.css", e.get(e.client, "/static/missing.css")},
		{"GET unknown action", e.get(e.client, "/nosuch")},
		{"OPTIONS /session", e.rawDo(http.MethodOptions, "/session", "", nil)},
		{"GET /callback/nosuch", e.get(e.client, "/callback/nosuch")},
		{"GET outside the base path", e.get(e.client, e.srv.URL+"/elsewhere")},
	} {
		requireFramingHeaders(t, r.what, r.res)
	}
}

// Pages carry a CSRF token (sign-in, sign-out, confirm) or may set the CSRF
// and callback-url cookies (all of them): a shared cache that stored one
// would hand its token and cookies to the next visitor. Every page is
// no-store; /csrf and /session keep next-auth's exact headers.
func TestPagesAreNeverStored(t *testing.T) {
	e := startEnv(t, envOpts{ownURL: true, smtp: &smtptest.Options{},
		email: func(p *config.Provider) { p.Confirm = true }})
	link := e.emailLink(e.browser(), "a@example.com", e.origin+"/")
	for _, path := range []string{
		"/signin", "/signout", link,
		"/error?error=Verification", "/verify-request?provider=email&type=email",
	} {
		// A fresh browser (the response sets cookies) and a returning one.
		for _, c := range []*http.Client{e.browser(), e.client} {
			res := e.get(c, path)
			require.Contains(t, res.Header.Get("Content-Type"), "text/html", path)
			require.Equal(t, "no-store", res.Header.Get("Cache-Control"), path)
		}
	}
	for _, path := range []string{"/csrf", "/session"} {
		res := e.get(e.client, path)
		require.Equal(t, "private, no-cache, no-store", res.Header.Get("Cache-Control"), path)
		require.Equal(t, "no-cache", res.Header.Get("Pragma"), path)
		require.Equal(t, "0", res.Header.Get("Expires"), path)
	}
}

// A form's POST may answer a redirect to any origin a callbackUrl or a
// custom page may name, and Chromium checks form-action on every redirect
// of a form submission: the list is the service's origin, each provider's
// authorization endpoint, the allowed redirect origins and the origins of
// absolute custom pages; relative pages are 'self'.
func TestFormActionListsWhereFormsRedirect(t *testing.T) {
	e := startEnv(t, envOpts{ownURL: true, idp: true, config: func(c *config.Config) {
		c.Providers = append(c.Providers,
			config.Provider{ID: "github", Type: config.TypeOAuth, ClientID: "id", ClientSecret: "secret"},
			config.Provider{ID: "email", Type: config.TypeEmail, Server: "smtp://127.0.0.1:9"})
		// An IPv6 literal has no CSP form (browsers ignore it as invalid):
		// it is left out.
		c.AllowedRedirectOrigins = []string{"https://app.example.com", "http://localhost:5173/", "http://[::1]:5174", "https://[2001:db8::1]"}
		c.Pages = config.Pages{SignIn: "/login", Error: "https://errors.example.com/oops?x=1",
			VerifyRequest: "https://app.example.com/check", NewUser: "https://welcome.example.com:8443/hi"}
	}})
	res := e.get(e.client, "/signout") // /signin redirects to pages.sign_in
	requirePagePolicy(t, "/signout", res,
		"'self'", e.origin, originOf(t, e.idp.Issuer()), "https://github.com",
		"https://app.example.com", "http://localhost:5173",
		"https://errors.example.com", "https://welcome.example.com:8443")
}

// A generic OIDC provider's authorization endpoint is known only after
// discovery, and may be on another origin than its issuer (Amazon Cognito:
// cognito-idp.<region>.amazonaws.com issues, <domain>.auth.<region>.amazoncognito.com
// authorizes). Before discovery the issuer's origin is listed; once the
// first sign-in has discovered the endpoint, its origin is listed too.
func TestFormActionLearnsDiscoveredAuthorizationEndpoint(t *testing.T) {
	e, issuer, other := startIdPElsewhere(t)
	before := cspDirectives(t, e.get(e.client, "/signin").Header.Get("Content-Security-Policy"))["form-action"]
	require.ElementsMatch(t, []string{"'self'", e.origin, issuer}, before)

	tok := e.jarCSRFToken(t)
	res := e.post(noRedirects(e.client), "/signin/idp", url.Values{"csrfToken": {tok}})
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.True(t, strings.HasPrefix(res.location(), other+"/"), res.location())

	after := cspDirectives(t, e.get(e.client, "/signin").Header.Get("Content-Security-Policy"))["form-action"]
	require.ElementsMatch(t, []string{"'self'", e.origin, issuer, other}, after)
}

// Serve discovers the OIDC issuers at start-up, so the first sign-in page
// already names an authorization endpoint on another origin.
func TestServeDiscoversIssuersAtStart(t *testing.T) {
	e, _, other := startIdPElsewhere(t)
	cfg := e.cfg
	cfg.DataDir, cfg.DatabaseURL = t.TempDir(), ""
	base := serveApp(t, cfg)
	require.Eventually(t, func() bool {
		res, err := http.Get(base + "/signin")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return strings.Contains(res.Header.Get("Content-Security-Policy"), " "+other)
	}, 10*time.Second, 20*time.Millisecond, "form-action never listed %s", other)
}

// startIdPElsewhere starts the app with an OIDC IdP whose discovery document
// puts the authorization endpoint on another origin than the issuer's (the
// same server under the name localhost).
func startIdPElsewhere(t *testing.T) (e *env, issuer, other string) {
	e = startEnv(t, envOpts{ownURL: true, idp: true, idpWrap: func(next http.Handler) http.Handler {
		return rewriteJSON(next, mockoidc.DiscoveryEndpoint, func(doc map[string]any) {
			doc["authorization_endpoint"] = other + mockoidc.AuthorizationEndpoint
		})
	}})
	issuer = originOf(t, e.idp.Issuer())
	_, port, err := net.SplitHostPort(strings.TrimPrefix(issuer, "http://"))
	require.NoError(t, err)
	other = "http://localhost:" + port
	return e, issuer, other
}

func originOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Scheme + "://" + u.Host
}

// A handler that panics (here the Session hook) is answered by the error
// handler with a 500 that still carries the security headers, the request
// is logged with that status, and the service goes on serving.
func TestPanicIsAnsweredWithHeaders(t *testing.T) {
	hooks := &signin.Hooks{Session: func(signin.SessionObject, signin.SessionInput) signin.SessionObject {
		panic("session hook broke")
	}}
	e := startEnv(t, envOpts{hooks: hooks, logs: true})
	u := e.addUser("Panic", "panic@example.com", "")
	tok := e.addDBSession(u, time.Now().Add(time.Hour))
	res := e.rawDo(http.MethodGet, "/session", "next-auth.session-token="+tok, nil)
	require.Equal(t, http.StatusInternalServerError, res.StatusCode)
	require.Equal(t, "Internal Server Error", res.body)
	requireFramingHeaders(t, "panic", res)
	require.Contains(t, e.logs.String(), "session hook broke")
	require.Regexp(t, `msg=request method=GET route=/api/auth/session status=500 `, e.logs.String())

	res = e.rawDo(http.MethodGet, "/csrf", "", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	requireFramingHeaders(t, "after the panic", res)
}

// Every page is kept from the windows that open it
// (Cross-Origin-Opener-Policy: same-origin) and turns off the powerful
// features none uses (Permissions-Policy), but the pages of a sign-in or
// sign-out journey, which an app may open in a popup and wait on through
// window.opener, keep their opener. Passkeys stay allowed to latchkey's own
// origin when offered; JSON and forward-auth answers carry neither header.
func TestPagesIsolateTheirWindowAndTurnOffFeatures(t *testing.T) {
	requirePolicy := func(t *testing.T, what string, res resp, coop, webauthn string) {
		t.Helper()
		require.Equal(t, []string{coop}, res.Header.Values("Cross-Origin-Opener-Policy"), what)
		pp := res.Header.Values("Permissions-Policy")
		require.Len(t, pp, 1, what)
		for _, f := range []string{"camera=()", "microphone=()", "geolocation=()", "payment=()", "usb=()",
			"publickey-credentials-get=" + webauthn, "publickey-credentials-create=" + webauthn} {
			require.Contains(t, strings.Split(pp[0], ", "), f, what)
		}
	}
	e := startPasskeys(t, backends()[0], func(c *config.Config) { c.TwoFactor.Mode = config.TwoFactorOptional })
	c := e.browser()
	e.emailSignIn(c, "a@example.com")
	for _, p := range []struct{ path, coop string }{
		{"/signin", "unsafe-none"},
		{"/signout", "unsafe-none"},
		{"/error?error=Verification", "unsafe-none"},
		{"/verify-request?provider=email&type=email", "unsafe-none"},
		{"/two-factor", "unsafe-none"},
		{"/account", "same-origin"},
		{"/passkeys", "same-origin"},
		{"/two-factor/settings", "same-origin"},
	} {
		res := e.get(c, p.path)
		requirePolicy(t, p.path, res, p.coop, "(self)")
	}
	for _, res := range []resp{e.get(c, "/session"), e.get(c, "/csrf"), e.get(c, "/webauthn-options/passkey?action=authenticate"),
		e.authz(c, forwardAuthPath)} {
		require.Empty(t, res.Header.Values("Permissions-Policy"), res.Request.URL.Path)
		require.Empty(t, res.Header.Values("Cross-Origin-Opener-Policy"), res.Request.URL.Path)
	}

	// The OpenID Provider's authorize redirect is a hop of such a journey.
	op := startOP(t, backends()[0], nil)
	target, _ := op.relyingParty("app", rpSecret).authorizeURL()
	res := op.get(op.browser(), target)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Empty(t, res.Header.Values("Cross-Origin-Opener-Policy"), "authorize redirect")

	// Without passkeys, no page may use WebAuthn.
	e = startEnv(t, envOpts{ownURL: true})
	requirePolicy(t, "no passkeys /signin", e.get(e.client, "/signin"), "unsafe-none", "()")
}
