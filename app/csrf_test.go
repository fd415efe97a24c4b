package app_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

var wireCSRF = regexp.MustCompile(`^([0-9a-f]{64})%7C([0-9a-f]{64})$`)

// requireNoStore checks next-auth's three no-cache headers.
func requireNoStore(t *testing.T, h http.Header) {
	t.Helper()
	require.Equal(t, "private, no-cache, no-store", h.Get("Cache-Control"))
	require.Equal(t, "no-cache", h.Get("Pragma"))
	require.Equal(t, "0", h.Get("Expires"))
}

func TestCSRFCookieFormat(t *testing.T) {
	e := startEnv(t, envOpts{})
	res := e.get(e.client, "/csrf")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"))
	requireNoStore(t, res.Header)

	body := res.json(t)
	require.Len(t, body, 1)
	token, _ := body["csrfToken"].(string)
	require.Regexp(t, hex64, token)

	c, ok := findCookie(res.Header, "next-auth.csrf-token")
	require.True(t, ok, "CSRF cookie set on first request: %v", res.Header.Values("Set-Cookie"))
	m := wireCSRF.FindStringSubmatch(rawValue(c.raw))
	require.NotNil(t, m, "wire value is <64 hex>%%7C<64 hex>: %s", c.raw)
	require.Equal(t, token, m[1], "token in GET /csrf equals the cookie's")
	require.Equal(t, csrfHash(token, testSecret), m[2], "hash is sha256hex(token+secret)")

	// Host-only, browser-session, HttpOnly, Lax, not Secure over http.
	require.Equal(t, "/", c.Path)
	require.Empty(t, c.Domain)
	require.True(t, c.HttpOnly)
	require.False(t, c.Secure)
	require.Equal(t, http.SameSiteLaxMode, c.SameSite)
	require.True(t, c.Expires.IsZero())
	require.Zero(t, c.MaxAge)

	// The callback-url cookie is set to the origin on the first request.
	cb, ok := findCookie(res.Header, "next-auth.callback-url")
	require.True(t, ok)
	require.Equal(t, "http%3A%2F%2Flocalhost%3A3000", rawValue(cb.raw))
}

func TestCSRFValidCookieKeepsToken(t *testing.T) {
	e := startEnv(t, envOpts{})
	first := e.csrf(e.client)
	for range 3 {
		res := e.get(e.client, "/csrf")
		_, reissued := findCookie(res.Header, "next-auth.csrf-token")
		require.False(t, reissued, "a valid CSRF cookie is not re-issued")
		_, cb := findCookie(res.Header, "next-auth.callback-url")
		require.False(t, cb, "an unchanged callback-url cookie is not re-issued")
		require.Equal(t, first, res.json(t)["csrfToken"])
	}
	// Other actions keep it too.
	for _, p := range []string{"/session", "/signin", "/signout", "/error", "/verify-request"} {
		res := e.get(e.client, p)
		_, reissued := findCookie(res.Header, "next-auth.csrf-token")
		require.False(t, reissued, p)
	}
	// A CSRF-checked POST does not rotate it either.
	res := e.post(e.client, "/signout", url.Values{"csrfToken": {first}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	_, reissued := findCookie(res.Header, "next-auth.csrf-token")
	require.False(t, reissued)
	require.Equal(t, first, e.csrf(e.client))
}

func TestCSRFInvalidCookieReplaced(t *testing.T) {
	other := strings.Repeat("ab", 32)
	cases := map[string]string{
		"missing":            "",
		"wrong hash":         other + "%7C" + strings.Repeat("0", 64),
		"other secret":       other + "%7C" + csrfHash(other, "another-secret-another-secret-xx"),
		"no separator":       other + csrfHash(other, testSecret),
		"token only":         other,
		"empty token":        "%7C" + csrfHash("", testSecret),
		"hash only":          "%7C",
		"raw pipe, bad hash": other + "|deadbeef",
		"upper-case hash":    other + "%7C" + strings.ToUpper(csrfHash(other, testSecret)),
		"bad percent":        other + "%7" + csrfHash(other, testSecret),
		"trailing junk":      other + "%7C" + csrfHash(other, testSecret) + "x",
	}
	// One instance for every case: GET /csrf keeps nothing on the server,
	// and each case sends its own cookie header.
	shared := startEnv(t, envOpts{})
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			e := shared.in(t)
			cookie := ""
			if value != "" {
				cookie = "next-auth.csrf-token=" + value
			}
			res := e.rawDo(http.MethodGet, "/csrf", cookie, nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			c, ok := findCookie(res.Header, "next-auth.csrf-token")
			require.True(t, ok, "a fresh cookie replaces %q", value)
			m := wireCSRF.FindStringSubmatch(rawValue(c.raw))
			require.NotNil(t, m)
			require.NotEqual(t, other, m[1])
			require.Equal(t, csrfHash(m[1], testSecret), m[2])
			require.Equal(t, m[1], res.json(t)["csrfToken"])
		})
	}

	t.Run("valid cookie from another computation is accepted", func(t *testing.T) {
		e := shared.in(t)
		res := e.rawDo(http.MethodGet, "/csrf", "next-auth.csrf-token="+other+"%7C"+csrfHash(other, testSecret), nil)
		_, reissued := findCookie(res.Header, "next-auth.csrf-token")
		require.False(t, reissued)
		require.Equal(t, other, res.json(t)["csrfToken"])
		// An unencoded "|" (as some clients send) is read the same way.
		res = e.rawDo(http.MethodGet, "/csrf", "next-auth.csrf-token="+other+"|"+csrfHash(other, testSecret), nil)
		_, reissued = findCookie(res.Header, "next-auth.csrf-token")
		require.False(t, reissued)
		require.Equal(t, other, res.json(t)["csrfToken"])
	})
}

func TestNoStoreHeaders(t *testing.T) {
	e := startEnv(t, envOpts{})
	for _, p := range []string{"/csrf", "/session"} {
		res := e.get(e.client, p)
		require.Equal(t, http.StatusOK, res.StatusCode, p)
		requireNoStore(t, res.Header)
	}
}

func TestCookieNames(t *testing.T) {
	cases := []struct {
		name, serviceURL, style string
		csrf, callback          string
		secure                  bool
	}{
		{"http next-auth", "http://localhost:3000/api/auth", config.StyleNextAuth, "next-auth.csrf-token", "next-auth.callback-url", false},
		{"https next-auth", "https://example.com/custom/auth", config.StyleNextAuth, "__Host-next-auth.csrf-token", "__Secure-next-auth.callback-url", true},
		{"http authjs", "http://localhost:3000/api/auth", config.StyleAuthJS, "authjs.csrf-token", "authjs.callback-url", false},
		{"https authjs", "https://example.com/api/auth", config.StyleAuthJS, "__Host-authjs.csrf-token", "__Secure-authjs.callback-url", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, envOpts{config: func(c *config.Config) {
				c.ServiceURL = tc.serviceURL
				c.Cookies.Style = tc.style
			}})
			// Secure cookies do not travel back over the test's plain http, so
			// read the Set-Cookie headers of a jar-less request.
			res := e.rawDo(http.MethodGet, "/csrf", "", nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			c, ok := findCookie(res.Header, tc.csrf)
			require.True(t, ok, "want %s in %v", tc.csrf, res.Header.Values("Set-Cookie"))
			require.Equal(t, tc.secure, c.Secure)
			require.Equal(t, "/", c.Path)
			require.Empty(t, c.Domain, "__Host- requires no Domain")
			require.True(t, c.HttpOnly)
			m := wireCSRF.FindStringSubmatch(rawValue(c.raw))
			require.NotNil(t, m)
			require.Equal(t, csrfHash(m[1], testSecret), m[2])

			cb, ok := findCookie(res.Header, tc.callback)
			require.True(t, ok, "want %s in %v", tc.callback, res.Header.Values("Set-Cookie"))
			require.Equal(t, tc.secure, cb.Secure)
			for _, sc := range setCookies(res.Header) {
				require.Contains(t, []string{tc.csrf, tc.callback}, sc.Name, "no other cookies on /csrf")
			}

			// The named cookie is the one read back: sending it keeps the token.
			again := e.rawDo(http.MethodGet, "/csrf", tc.csrf+"="+rawValue(c.raw), nil)
			_, reissued := findCookie(again.Header, tc.csrf)
			require.False(t, reissued)
			require.Equal(t, m[1], again.json(t)["csrfToken"])
		})
	}
}

// TestCSRFEveryPost: one verification for every CSRF-checked POST,
// answered in next-auth's three redirect styles.
func TestCSRFEveryPost(t *testing.T) {
	type target struct{ path, failTo string }
	targets := []target{
		{"/signin/email", "/signin?csrf=true"},
		{"/signin/nope", "/signin?csrf=true"}, // unknown provider: same redirect as v4
		{"/signout", "/signout?csrf=true"},
		{"/signout/all", "/signout?csrf=true"},
	}
	type tokenCase struct {
		name  string
		token func(e *env) (form string, withCookie bool)
	}
	tokens := []tokenCase{
		{"no token", func(e *env) (string, bool) { e.csrf(e.client); return "", true }},
		{"wrong token", func(e *env) (string, bool) { e.csrf(e.client); return strings.Repeat("0", 64), true }},
		{"cookie hash as token", func(e *env) (string, bool) {
			tok := e.csrf(e.client)
			return csrfHash(tok, testSecret), true
		}},
		{"token without cookie", func(e *env) (string, bool) {
			tok := e.csrf(e.client)
			return tok, false
		}},
		{"token and hash", func(e *env) (string, bool) {
			tok := e.csrf(e.client)
			return tok + "|" + csrfHash(tok, testSecret), true
		}},
	}
	// One instance for every case, each with a fresh browser: the counts
	// before and after each case show that its refused POST wrote nothing.
	shared := startEnv(t, envOpts{})
	for _, tg := range targets {
		for _, tc := range tokens {
			t.Run(tg.path+"/"+tc.name, func(t *testing.T) {
				e := shared.in(t)
				e.client = e.browser()
				formTok, withCookie := tc.token(e)
				if !withCookie {
					e.client.Jar = nil
				}
				want := e.base + tg.failTo
				form := url.Values{"callbackUrl": {"/after"}, "email": {"user@example.com"}}
				if formTok != "" {
					form.Set("csrfToken", formTok)
				}
				before := e.counts()

				res := e.post(e.client, tg.path, form)
				require.Equal(t, http.StatusFound, res.StatusCode)
				require.Equal(t, want, res.Header.Get("Location"))
				require.Empty(t, res.body)

				form.Set("json", "true")
				res = e.post(e.client, tg.path, form)
				require.Equal(t, http.StatusOK, res.StatusCode)
				require.Empty(t, res.Header.Get("Location"), "v4 JSON mode drops Location")
				require.Equal(t, map[string]any{"url": want}, res.json(t))
				form.Del("json")

				res = e.post(e.client, tg.path, form, "X-Auth-Return-Redirect", "1")
				require.Equal(t, http.StatusOK, res.StatusCode)
				require.Equal(t, want, res.Header.Get("Location"), "v5 keeps Location")
				require.Equal(t, map[string]any{"url": want}, res.json(t))

				require.Equal(t, before, e.counts(), "a failed CSRF check writes nothing")
			})
		}
	}
}

func TestCSRFJSONBooleanIsNotJSONMode(t *testing.T) {
	e := startEnv(t, envOpts{})
	e.csrf(e.client)
	req, _ := http.NewRequest(http.MethodPost, e.url("/signout"), strings.NewReader(`{"json":true}`))
	req.Header.Set("Content-Type", "application/json")
	res := e.do(e.client, req)
	require.Equal(t, http.StatusFound, res.StatusCode, "only the string \"true\" selects JSON mode")
	require.Equal(t, e.base+"/signout?csrf=true", res.Header.Get("Location"))
}

func TestCSRFValidPostPasses(t *testing.T) {
	e := startEnv(t, envOpts{})
	tok := e.csrf(e.client)

	res := e.post(e.client, "/signout", url.Values{"csrfToken": {tok}, "callbackUrl": {"/bye"}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "http://localhost:3000/bye", res.Header.Get("Location"))

	res = e.post(e.client, "/signout", url.Values{"csrfToken": {tok}, "callbackUrl": {"/bye"}, "json": {"true"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, map[string]any{"url": "http://localhost:3000/bye"}, res.json(t))

	// A JSON body carries the token as well (the v4 client posts JSON to /session).
	req, _ := http.NewRequest(http.MethodPost, e.url("/signout"), strings.NewReader(`{"csrfToken":"`+tok+`","callbackUrl":"/json","json":"true"}`))
	req.Header.Set("Content-Type", "application/json")
	res = e.do(e.client, req)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, map[string]any{"url": "http://localhost:3000/json"}, res.json(t))

	// The e-mail sign-in gets past the CSRF check (what happens next is the e-mail provider's business).
	res = e.post(e.client, "/signin/email", url.Values{"csrfToken": {tok}, "email": {"user@example.com"}})
	require.NotEqual(t, e.base+"/signin?csrf=true", res.Header.Get("Location"))
	require.NotEqual(t, http.StatusInternalServerError, res.StatusCode)
}

func TestPostSessionCSRF(t *testing.T) {
	e := startEnv(t, envOpts{})
	tok := e.csrf(e.client)
	post := func(body string) resp {
		req, _ := http.NewRequest(http.MethodPost, e.url("/session"), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return e.do(e.client, req)
	}
	for _, body := range []string{`{}`, `{"data":{"a":1}}`, `{"csrfToken":"nope"}`, `{"csrfToken":123}`, ``} {
		res := post(body)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
		require.Equal(t, "{}", strings.TrimSpace(res.body), body)
		require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"))
	}
	res := post(`{"csrfToken":"` + tok + `","data":{"a":1}}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "{}", strings.TrimSpace(res.body), "no session: {}")
}
