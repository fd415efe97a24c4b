package app_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
)

// everyRoute is every route of the table with a method it accepts.
var everyRoute = []struct{ method, path string }{
	{http.MethodGet, "/csrf"},
	{http.MethodGet, "/providers"},
	{http.MethodGet, "/session"},
	{http.MethodPost, "/session"},
	{http.MethodGet, "/signin"},
	{http.MethodGet, "/signin/email"},
	{http.MethodPost, "/signin/email"},
	{http.MethodGet, "/signout"},
	{http.MethodPost, "/signout"},
	{http.MethodGet, "/error?error=Verification"},
	{http.MethodGet, "/verify-request"},
}

// requireFreshCSRF checks a newly issued, correctly signed CSRF cookie.
func requireFreshCSRF(t *testing.T, h http.Header, name string, msg ...any) {
	t.Helper()
	c, ok := findCookie(h, name)
	require.True(t, ok, "fresh CSRF cookie expected in %v (%v)", h.Values("Set-Cookie"), msg)
	m := wireCSRF.FindStringSubmatch(rawValue(c.raw))
	require.NotNil(t, m, c.raw)
	require.Equal(t, csrfHash(m[1], testSecret), m[2])
}

func TestBadCookies(t *testing.T) {
	tok := strings.Repeat("c", 64)
	huge := strings.Repeat("x", 8*1024)
	badCSRF := map[string]string{
		"bad percent":     "next-auth.csrf-token=%zz%7C" + csrfHash("%zz", testSecret),
		"lone percent":    "next-auth.csrf-token=%",
		"truncated utf-8": "next-auth.csrf-token=%E0%A4%A",
		"missing pipe":    "next-auth.csrf-token=" + tok + csrfHash(tok, testSecret),
		"wrong hash":      "next-auth.csrf-token=" + tok + "%7C" + csrfHash(tok, "wrong"),
		"huge":            "next-auth.csrf-token=" + huge,
		"huge with pipe":  "next-auth.csrf-token=" + huge + "%7C" + huge,
		"quoted":          `next-auth.csrf-token="` + tok + `%7C` + csrfHash(tok, testSecret) + `x"`,
		"nul":             "next-auth.csrf-token=" + tok + "%00%7C" + csrfHash(tok, testSecret),
		"everything bad": "next-auth.csrf-token=%; next-auth.callback-url=%zz; next-auth.session-token=" + huge +
			"; next-auth.session-token.0=%; next-auth.session-token.99999999999999999999=x",
		"syntax soup": ";;; =; ==; next-auth.csrf-token; next-auth.csrf-token=",
	}
	otherCookies := []string{
		"next-auth.callback-url=" + huge,
		"next-auth.callback-url=%zz",
		"next-auth.callback-url=javascript%3Aalert(1)",
		"next-auth.session-token=" + huge,
		"next-auth.session-token=%zz",
		"next-auth.session-token.0=" + huge + "; next-auth.session-token.1=" + huge,
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startEnv(t, b.opts(envOpts{}))
			before := e.counts()
			for name, cookie := range badCSRF {
				for _, rt := range everyRoute {
					res := e.rawDo(rt.method, rt.path, cookie, strings.NewReader("csrfToken="+tok),
						"Content-Type", "application/x-www-form-urlencoded")
					require.Less(t, res.StatusCode, 500, "%s %s with %s: %s", rt.method, rt.path, name, res.body)
					if rt.method == http.MethodPost && rt.path != "/session" {
						require.Contains(t, res.Header.Get("Location"), "csrf=true", "%s with %s never verifies", rt.path, name)
					}
					if rt.method == http.MethodPost && rt.path == "/session" {
						require.Equal(t, http.StatusBadRequest, res.StatusCode)
					}
					if rt.path != "/providers" {
						requireFreshCSRF(t, res.Header, "next-auth.csrf-token", name, rt.path)
					}
				}
			}
			for _, cookie := range otherCookies {
				for _, rt := range everyRoute {
					res := e.rawDo(rt.method, rt.path, cookie, nil)
					require.Less(t, res.StatusCode, 500, "%s %s with %.60s", rt.method, rt.path, cookie)
					if loc := res.Header.Get("Location"); strings.HasPrefix(loc, "http") {
						require.True(t, sameOrigin(loc, e.origin), loc)
					}
				}
			}
			// The providers list never looks at cookies.
			res := e.rawDo(http.MethodGet, "/providers", badCSRF["everything bad"], nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Empty(t, res.Header.Values("Set-Cookie"))
			require.Equal(t, before, e.counts(), "bad cookies write nothing")
		})
	}
}

func TestUnsupportedMethods(t *testing.T) {
	e := startEnv(t, envOpts{})
	before := e.counts()
	paths := []string{"/csrf", "/providers", "/session", "/signin", "/signin/email", "/callback/email",
		"/signout", "/error", "/verify-request", "/static/style.css"}
	methods := []string{http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead, http.MethodOptions, "PROPFIND", http.MethodTrace}
	for _, p := range paths {
		for _, m := range methods {
			if m == http.MethodHead && p == "/static/style.css" {
				continue // the static files answer HEAD like any file server
			}
			res := e.rawDo(m, p, "", strings.NewReader("x=1"))
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s %s", m, p)
			if m == http.MethodHead {
				require.Empty(t, res.body)
				continue
			}
			require.Equal(t, "Error: This action with HTTP "+m+" is not supported by NextAuth.js", res.body, "%s %s", m, p)
			require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain"))
		}
	}
	// POST on GET-only actions and any method on unknown actions.
	for _, p := range []string{"/csrf", "/providers", "/error", "/verify-request", "/nope", "/callback"} {
		res := e.rawDo(http.MethodPost, p, "", strings.NewReader("csrfToken=x"), "Content-Type", "application/x-www-form-urlencoded")
		require.Equal(t, http.StatusBadRequest, res.StatusCode, p)
		require.Equal(t, "Error: This action with HTTP POST is not supported by NextAuth.js", res.body, p)
	}
	// GET of an unknown provider's callback is "not supported" as in v4.
	// Like v4, it is refused before init: no cookie is issued.
	res := e.rawDo(http.MethodGet, "/callback/nope?code=x&state=y", "", nil)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Equal(t, "Error: This action with HTTP GET is not supported by NextAuth.js", res.body)
	require.Empty(t, res.Header.Values("Set-Cookie"))
	// Outside the base path OPTIONS is not special either.
	res = e.rawDo(http.MethodOptions, e.srv.URL+"/elsewhere", "", nil)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Equal(t, before, e.counts())
}

func TestBodyLimit(t *testing.T) {
	e := startEnv(t, envOpts{})
	tok := e.csrf(e.client)
	before := e.counts()
	limit := int(e.cfg.MaxBodyBytes)
	require.Equal(t, 64<<10, limit)

	form := func(size int) string {
		prefix := "csrfToken=" + tok + "&email=a%40example.com&pad="
		return prefix + strings.Repeat("a", size-len(prefix))
	}
	jsonBody := func(size int) string {
		prefix := `{"csrfToken":"` + tok + `","pad":"`
		return prefix + strings.Repeat("a", size-len(prefix)-2) + `"}`
	}
	for _, p := range []string{"/signin/email", "/signin/nope", "/signout", "/callback/email", "/session"} {
		for _, ct := range []string{"application/x-www-form-urlencoded", "application/json"} {
			body := form(limit + 1)
			if ct == "application/json" {
				body = jsonBody(limit + 1)
			}
			require.Len(t, body, limit+1)
			req, _ := http.NewRequest(http.MethodPost, e.url(p), strings.NewReader(body))
			req.Header.Set("Content-Type", ct)
			res := e.do(e.client, req)
			require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "%s %s", p, ct)

			// Without a Content-Length (chunked) the limit holds as well.
			req, _ = http.NewRequest(http.MethodPost, e.url(p), io.MultiReader(strings.NewReader(body), bytes.NewReader(make([]byte, 256<<10))))
			req.Header.Set("Content-Type", ct)
			res = e.do(e.client, req)
			require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "%s %s chunked", p, ct)
		}
	}
	// Exactly the limit is fine: /signout with a valid token signs out.
	res := e.post(e.client, "/signout", nil)
	require.Equal(t, http.StatusFound, res.StatusCode)
	req, _ := http.NewRequest(http.MethodPost, e.url("/signout"), strings.NewReader(form(limit)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res = e.do(e.client, req)
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "http://localhost:3000", res.Header.Get("Location"))
	require.Equal(t, before, e.counts())
}

func TestMalformedBodies(t *testing.T) {
	e := startEnv(t, envOpts{})
	tok := e.csrf(e.client)
	before := e.counts()
	post := func(p, ct, body string) resp {
		req, _ := http.NewRequest(http.MethodPost, e.url(p), strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		return e.do(e.client, req)
	}
	for _, body := range []string{`{`, `{"csrfToken":`, `[1,2]`, `"str"`, `{"csrfToken":"` + tok + `"`, "\x00\x01", `{"csrfToken":"` + tok + `"}}`} {
		res := post("/session", "application/json", body)
		require.GreaterOrEqual(t, res.StatusCode, 400, body)
		require.Less(t, res.StatusCode, 500, body)
	}
	for _, p := range []string{"/session", "/signout", "/signin/email"} {
		for _, c := range []struct{ ct, body string }{
			{"application/x-www-form-urlencoded", "csrfToken=%zz"},
			{"application/x-www-form-urlencoded", "csrfToken=" + tok + "&x=%"},
			{"application/json", "{bad json"},
			{"application/json; charset=utf-8", `{"csrfToken": 5`},
		} {
			res := post(p, c.ct, c.body)
			require.GreaterOrEqual(t, res.StatusCode, 400, "%s %q", p, c.body)
			require.Less(t, res.StatusCode, 500, "%s %q", p, c.body)
		}
		// Other content types never cause a 500.
		for _, ct := range []string{"", "text/plain", "multipart/form-data; boundary=x", "application/xml", "application/json;;;", "%%%"} {
			res := post(p, ct, "--x\r\ncsrfToken="+tok+"\r\n--x--")
			require.Less(t, res.StatusCode, 500, "%s %q", p, ct)
		}
	}
	require.Equal(t, before, e.counts())
}

// hostileCallbackURLs are callbackUrl values that must never leave the origin.
var hostileCallbackURLs = []string{
	"//evil.test",
	"//evil.test/path",
	"///evil.test",
	`/\evil.test`,
	`\\evil.test`,
	`/\/evil.test`,
	"https://evil.test",
	"http://evil.test/",
	"HTTPS://EVIL.TEST",
	"javascript:alert(1)",
	"JaVaScRiPt:alert(document.cookie)",
	" javascript:alert(1)",
	"data:text/html,<script>alert(1)</script>",
	"vbscript:msgbox",
	"evil.test",
	"foo",
	"http://localhost:3000.evil.test",
	"http://localhost:3000@evil.test",
	"http://localhost:3000%40evil.test",
	`http://localhost:3000\@evil.test`,
	"http://user:pass@localhost:3000/",
	"https://localhost:3000/",
	"http:/evil.test",
	"http:evil.test",
	"http:///evil.test",
	"ftp://evil.test",
	"/\t/evil.test",
	"/\r\nSet-Cookie: x=y",
	"/\x00",
	"http://evil.test\x00.localhost:3000",
	"http://еvil.test", // Cyrillic е
	"https://evil.test%2F@localhost:3000",
	"http://[::1]:3000/",
	"http://localhost:3000:80/",
	"/" + strings.Repeat("a", 9000),
	"%2F%2Fevil.test",
	"/%2F%2Fevil.test",
}

func TestHostileCallbackURL(t *testing.T) {
	e := startEnv(t, envOpts{config: func(c *config.Config) { c.AllowedRedirectOrigins = []string{"https://app.example.com"} }})
	tok := e.csrf(e.client)
	before := e.counts()

	check := func(t *testing.T, what string, res resp) {
		t.Helper()
		require.Less(t, res.StatusCode, 500, "%s: %s", what, res.body)
		if loc := res.Header.Get("Location"); loc != "" {
			require.True(t, sameOrigin(loc, e.origin), "%s: Location %q leaves the origin", what, loc)
		}
		for _, sc := range setCookies(res.Header) {
			if sc.Name != "next-auth.callback-url" {
				continue
			}
			v, err := url.QueryUnescape(rawValue(sc.raw))
			require.NoError(t, err)
			require.True(t, sameOrigin(v, e.origin), "%s: callback-url cookie %q leaves the origin", what, v)
		}
		if strings.Contains(res.Header.Get("Content-Type"), "application/json") && strings.Contains(res.body, `"url"`) {
			u, _ := res.json(t)["url"].(string)
			require.True(t, sameOrigin(u, e.origin), "%s: url %q leaves the origin", what, u)
		}
	}
	for _, v := range hostileCallbackURLs {
		q := "?callbackUrl=" + url.QueryEscape(v)
		t.Run(strings.ToValidUTF8(v[:min(len(v), 40)], "?"), func(t *testing.T) {
			for _, p := range []string{"/csrf", "/session", "/signin", "/signout", "/error", "/verify-request"} {
				check(t, "GET "+p+" query", e.rawDo(http.MethodGet, p+q, "", nil))
			}
			// The sign-in page never puts it in a form.
			page := parsePage(t, e.rawDo(http.MethodGet, "/signin"+q, "", nil).body)
			for _, f := range page.forms() {
				if cb, ok := f.input("callbackUrl"); ok {
					require.True(t, sameOrigin(cb.value, e.origin), cb.value)
				}
			}
			// Form, JSON mode, v5 header, and the cookie, on a CSRF-valid sign-out.
			check(t, "POST /signout form", e.post(e.client, "/signout", url.Values{"csrfToken": {tok}, "callbackUrl": {v}}))
			check(t, "POST /signout json", e.post(e.client, "/signout", url.Values{"csrfToken": {tok}, "callbackUrl": {v}, "json": {"true"}}))
			check(t, "POST /signout header", e.post(e.client, "/signout", url.Values{"csrfToken": {tok}, "callbackUrl": {v}}, "X-Auth-Return-Redirect", "1"))
			check(t, "POST /signout query", e.post(e.client, "/signout"+q, url.Values{"csrfToken": {tok}}))
			check(t, "POST /signin bad csrf", e.post(e.client, "/signin/email", url.Values{"callbackUrl": {v}, "email": {"a@example.com"}}))
			e.setJarCookie(e.client, "next-auth.callback-url", cookies.Encode(v))
			check(t, "POST /signout cookie", e.post(e.client, "/signout", url.Values{"csrfToken": {tok}}))
			check(t, "GET /csrf cookie", e.get(e.client, "/csrf"))
			// A raw (unencoded) cookie value as well.
			if !strings.ContainsAny(v, ";\r\n\x00 \t\"") {
				check(t, "GET /csrf raw cookie", e.rawDo(http.MethodGet, "/csrf", "next-auth.callback-url="+v, nil))
			}
		})
	}
	// Allowed targets do survive, so the checks above are meaningful.
	res := e.post(e.client, "/signout", url.Values{"csrfToken": {tok}, "callbackUrl": {"https://app.example.com/home"}})
	require.Equal(t, "https://app.example.com/home", res.Header.Get("Location"))
	res = e.post(e.client, "/signout", url.Values{"csrfToken": {tok}, "callbackUrl": {"/dash?x=1#y"}})
	require.Equal(t, "http://localhost:3000/dash?x=1#y", res.Header.Get("Location"))
	c, ok := findCookie(res.Header, "next-auth.callback-url")
	require.True(t, ok)
	require.Equal(t, "http%3A%2F%2Flocalhost%3A3000%2Fdash%3Fx%3D1%23y", rawValue(c.raw))
	require.Equal(t, before, e.counts(), "nothing written")
}

func TestIgnoresHostHeaders(t *testing.T) {
	e := startEnv(t, envOpts{})
	req, _ := http.NewRequest(http.MethodGet, e.url("/error?error=OAuthSignin"), nil)
	req.Host = "evil.test"
	req.Header.Set("X-Forwarded-Host", "evil.test")
	req.Header.Set("X-Forwarded-Proto", "https")
	res := e.do(e.client, req)
	require.Equal(t, "http://localhost:3000/api/auth/signin?error=OAuthSignin", res.Header.Get("Location"))
}
