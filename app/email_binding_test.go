package app_test

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// bindingCookie is the e-mail link binding cookie's name under plain http
// with the next-auth cookie style.
const bindingCookie = "next-auth.email-binding"

// bindingCodec is the binding cookie's codec for one secret, derived here
// independently of the app (HKDF-SHA256, one info string per key).
func bindingCodec(t *testing.T, secret string) securecookie.Codec {
	t.Helper()
	hashKey, err := hkdf.Key(sha256.New, []byte(secret), nil, "latchkey e-mail link binding: HMAC-SHA256 key", 64)
	require.NoError(t, err)
	blockKey, err := hkdf.Key(sha256.New, []byte(secret), nil, "latchkey e-mail link binding: AES-256 key", 32)
	require.NoError(t, err)
	return securecookie.New(hashKey, blockKey).SetSerializer(securecookie.JSONEncoder{})
}

// bindingValue is the binding cookie in c's jar (it is sent below the base path only).
func (e *env) bindingValue(c *http.Client) (string, bool) {
	u, _ := url.Parse(e.srv.URL + e.path + "/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == bindingCookie {
			return ck.Value, true
		}
	}
	return "", false
}

// shareBinding gives to the binding cookie of from, like another tab of the
// browser that asked for the links.
func (e *env) shareBinding(from, to *http.Client) {
	e.t.Helper()
	v, ok := e.bindingValue(from)
	require.True(e.t, ok, "no binding cookie to share")
	e.setJarCookie(to, bindingCookie, v)
}

// confirmLink opens a link in c, a browser that did not ask for it (another
// device): the confirm page, then its button. It returns the button's answer.
func (e *env) confirmLink(c *http.Client, link string) resp {
	e.t.Helper()
	page := e.get(c, link)
	require.Equal(e.t, http.StatusOK, page.StatusCode, "expected the confirm page, got location %q", page.location())
	action, fields := mailForm(e.t, page.body)
	return e.post(c, action, fields)
}

// requireConfirmPage asserts the confirm page for a link that signs into
// addr: 200, no caching, the address shown, the button, nobody signed in.
func (e *env) requireConfirmPage(c *http.Client, res resp, addr string) {
	e.t.Helper()
	require.Equal(e.t, http.StatusOK, res.StatusCode, "location %q", res.location())
	require.Equal(e.t, "no-store", res.Header.Get("Cache-Control"))
	require.Contains(e.t, res.body, `id="submitButton"`)
	require.Contains(e.t, res.body, "<strong>"+addr+"</strong>")
	got, _ := e.sessionUser(c)
	require.Empty(e.t, got, "opening the link did not sign in")
}

// Login CSRF: the attacker asks for a link to his own address and gets the
// victim to open it. The victim's browser never asked for it, so it only
// gets the confirm page, naming the attacker's address as stored with the
// token (a forged email= parameter changes nothing), and spends nothing;
// only a deliberate click signs it in, as the account it was shown.
func TestEmailLinkOpenedInAnotherBrowserAsksFirst(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startMail(t, envOpts{strategy: strategy})
			attacker := e.browser()
			link := e.emailLink(attacker, "attacker@example.com", e.origin+"/home")

			victim := e.browser()
			page := e.get(victim, link)
			e.requireConfirmPage(victim, page, "attacker@example.com")
			require.EqualValues(t, 1, e.tokens(), "the link is not spent")
			require.EqualValues(t, 0, e.counts().Users)
			require.EqualValues(t, 0, e.counts().Sessions)

			q := linkQuery(t, link)
			q.Set("email", "victim@example.com")
			forged := e.get(victim, e.base+"/callback/email?"+q.Encode())
			e.requireConfirmPage(victim, forged, "attacker@example.com")
			require.NotContains(t, forged.body, "victim@example.com", "the URL's address is never shown")
			require.EqualValues(t, 1, e.tokens())

			// The deliberate click: signed in as the account the page named.
			action, fields := mailForm(t, page.body)
			res := e.post(victim, action, fields)
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, e.origin+"/home", res.location())
			addr, _ := e.sessionUser(victim)
			require.Equal(t, "attacker@example.com", addr)
			require.Zero(t, e.tokens())
			_, set := findCookie(res.Header, bindingCookie)
			require.False(t, set, "a browser without a binding gets no binding cookie")
		})
	}
}

// The browser that asked for a link holds its binding (an HttpOnly,
// SameSite=Lax cookie on the base path, living as long as the link) and
// signs in on GET, as next-auth does; the spent link's binding goes.
func TestEmailLinkInRequestingBrowserSignsInDirectly(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			e := startMail(t, envOpts{strategy: strategy})
			c := e.browser()
			res := e.requestLink(c, "alice@example.com", url.Values{"callbackUrl": {e.origin + "/home"}})
			require.Equal(t, e.base+"/verify-request?provider=email&type=email", res.location())
			ck, ok := findCookie(res.Header, bindingCookie)
			require.True(t, ok, "binding cookie set with the link: %v", res.Header.Values("Set-Cookie"))
			require.True(t, ck.HttpOnly)
			require.Equal(t, http.SameSiteLaxMode, ck.SameSite)
			require.Equal(t, "/api/auth", ck.Path)
			require.Equal(t, int((24 * time.Hour).Seconds()), ck.MaxAge)
			require.False(t, ck.Secure)
			require.Empty(t, ck.Domain)
			require.NotContains(t, ck.Value, linkQuery(t, e.link(1)).Get("token"))

			res = e.get(c, e.link(1))
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, e.origin+"/home", res.location())
			addr, _ := e.sessionUser(c)
			require.Equal(t, "alice@example.com", addr)
			require.Zero(t, e.tokens())
			ck, ok = findCookie(res.Header, bindingCookie)
			require.True(t, ok)
			require.Negative(t, ck.MaxAge, "the last binding spent: the cookie is cleared")
			require.Equal(t, "/api/auth", ck.Path)
			_, inJar := e.bindingValue(c)
			require.False(t, inJar)
		})
	}
}

// Max-Age is the link's whole life even when a second boundary passes
// between storing the link and setting the cookie (here the SignIn hook
// takes 600 ms, from x.6 s to x+1.2 s).
func TestEmailBindingCookieMaxAgeAcrossASecond(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second).Add(600 * time.Millisecond)}
	hooks := &signin.Hooks{SignIn: func(_ context.Context, in signin.SignInInput) (bool, string) {
		if in.VerificationRequest {
			clock.Add(600 * time.Millisecond)
		}
		return true, ""
	}}
	e := startMail(t, envOpts{clock: clock, hooks: hooks})
	res := e.requestLink(e.browser(), "alice@example.com", nil)
	ck, ok := findCookie(res.Header, bindingCookie)
	require.True(t, ok)
	require.Equal(t, int((24 * time.Hour).Seconds()), ck.MaxAge)
}

// One browser can have several links pending (retries, other addresses):
// each opens directly, and redeeming one keeps the others. The list is
// bounded; past it the oldest link loses its binding and asks first.
func TestEmailSeveralPendingLinksInOneBrowser(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) { p.RateLimit.Disabled = true }})
	c := e.browser()
	var links []string
	for i := range 6 {
		links = append(links, e.emailLink(c, []string{"a@example.com", "b@example.com"}[i%2], e.origin+"/"))
	}

	// The oldest of six fell out of the five kept: another browser's view.
	e.requireConfirmPage(c, e.get(c, links[0]), "a@example.com")

	res := e.get(c, links[5])
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	addr, _ := e.sessionUser(c)
	require.Equal(t, "b@example.com", addr)
	ck, ok := findCookie(res.Header, bindingCookie)
	require.True(t, ok)
	require.Positive(t, ck.MaxAge, "the other bindings stay")

	res = e.get(c, links[2])
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	addr, _ = e.sessionUser(c)
	require.Equal(t, "a@example.com", addr)
	// The spent link's binding is gone: opening it again is the ordinary
	// Verification error, whether bound or not.
	e.requireError(e.get(c, links[5]), "Verification")
	require.EqualValues(t, 6-2, e.tokens())
}

// A binding cookie only counts when it decrypts and verifies under one of
// the secrets: a tampered one, or one made under an unrelated secret, is no
// binding (the confirm page); one made under an older rotation secret
// still is (a rotation does not turn pending links into confirm pages).
func TestEmailBindingCookieKeys(t *testing.T) {
	const current = "rotated-secret-fedcba9876543210fedcba9876543210"
	e := startMail(t, envOpts{config: func(c *config.Config) {
		c.RotationSecrets = []string{current} // signs everything new; testSecret stays accepted
	}})
	requester := e.browser()
	link := e.emailLink(requester, "alice@example.com", e.origin+"/home")
	issued, ok := e.bindingValue(requester)
	require.True(t, ok)

	// The app made it under the current (first) secret.
	var payload json.RawMessage
	require.NoError(t, securecookie.DecodeMulti(bindingCookie, issued, &payload, bindingCodec(t, current)))
	require.Error(t, securecookie.DecodeMulti(bindingCookie, issued, &payload, bindingCodec(t, testSecret)))
	underOld, err := securecookie.EncodeMulti(bindingCookie, payload, bindingCodec(t, testSecret))
	require.NoError(t, err)
	underUnrelated, err := securecookie.EncodeMulti(bindingCookie, payload, bindingCodec(t, "unrelated-secret-0000000000000000000000000000"))
	require.NoError(t, err)
	flipped := []byte(issued)
	flipped[len(flipped)/2] ^= 1
	// The same cookie under another name does not count either (the name is MACed).
	var otherName string
	otherName, err = securecookie.EncodeMulti("next-auth.other", payload, bindingCodec(t, current))
	require.NoError(t, err)

	for name, value := range map[string]string{
		"tampered":          string(flipped),
		"unrelated secret":  underUnrelated,
		"another name's":    otherName,
		"garbage":           "not-a-cookie",
		"truncated":         issued[:len(issued)-4],
		"empty":             "",
		"oversized garbage": strings.Repeat("A", 5000),
	} {
		c := e.browser()
		e.setJarCookie(c, bindingCookie, value)
		res := e.get(c, link)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", name, res.location())
		e.requireConfirmPage(c, res, "alice@example.com")
	}
	require.EqualValues(t, 1, e.tokens())

	c := e.browser()
	e.setJarCookie(c, bindingCookie, underOld)
	res := e.get(c, link)
	require.Equal(t, http.StatusFound, res.StatusCode, "made under the older secret: %s", res.body)
	require.Equal(t, e.origin+"/home", res.location())
	addr, _ := e.sessionUser(c)
	require.Equal(t, "alice@example.com", addr)
}

// Opening a link without its binding changes nothing, however often (mail
// scanners, previews, a second device): the link stays usable and the
// requesting browser still signs in with it directly. HEAD still never
// reaches the handler.
func TestEmailConfirmPageConsumesNothing(t *testing.T) {
	e := startMail(t, envOpts{})
	requester := e.browser()
	link := e.emailLink(requester, "alice@example.com", e.origin+"/home")
	for range 3 {
		scanner := e.browser()
		e.requireConfirmPage(scanner, e.get(scanner, link), "alice@example.com")
	}
	req, err := http.NewRequest(http.MethodHead, link, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, e.do(requester, req).StatusCode)
	require.EqualValues(t, 1, e.tokens())
	require.EqualValues(t, 0, e.counts().Users)
	require.EqualValues(t, 0, e.counts().Sessions)

	res := e.get(requester, link)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, e.origin+"/home", res.location())
}

// Without a binding, an unknown, spent or expired token goes straight to
// the Verification error: the confirm page is only shown for a live link,
// and tells a holder of a dead one nothing more than the click would.
func TestEmailDeadLinkWithoutBinding(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) { p.MaxAge = config.Duration(10 * time.Minute) }})
	e.requireError(e.get(e.browser(), e.base+"/callback/email?token="+strings.Repeat("ab", 32)+"&email=alice%40example.com"), "Verification")
	link := e.emailLink(e.browser(), "alice@example.com", e.origin+"/")
	e.clock.Add(10*time.Minute + time.Second)
	e.requireError(e.get(e.browser(), link), "Verification")
	require.EqualValues(t, 0, e.counts().Users)
}

// The binding cookie follows the cookie style: next-auth or authjs
// prefix, __Secure- and the Secure attribute under https, Path = the base
// path (so the app beside latchkey never receives it).
func TestEmailBindingCookieName(t *testing.T) {
	cases := []struct {
		serviceURL, style, name, path string
		secure                        bool
	}{
		{"https://auth.example.com/custom/auth", config.StyleNextAuth, "__Secure-next-auth.email-binding", "/custom/auth", true},
		{"https://auth.example.com/api/auth", config.StyleAuthJS, "__Secure-authjs.email-binding", "/api/auth", true},
		{"http://localhost:3000/idp", config.StyleAuthJS, "authjs.email-binding", "/idp", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, envOpts{smtp: &smtptest.Options{}, config: func(c *config.Config) {
				c.ServiceURL = tc.serviceURL
				c.Cookies.Style = tc.style
			}})
			// Secure cookies do not travel back over the test's plain http:
			// send the CSRF cookie by hand.
			res := e.rawDo(http.MethodGet, "/csrf", "", nil)
			var csrfCookie string
			for _, sc := range setCookies(res.Header) {
				if strings.HasSuffix(sc.Name, ".csrf-token") {
					csrfCookie = sc.Name + "=" + rawValue(sc.raw)
				}
			}
			require.NotEmpty(t, csrfCookie)
			form := url.Values{"csrfToken": {res.json(t)["csrfToken"].(string)}, "email": {"alice@example.com"}}
			res = e.rawDo(http.MethodPost, "/signin/email", csrfCookie, strings.NewReader(form.Encode()),
				"Content-Type", "application/x-www-form-urlencoded")
			require.Equal(t, http.StatusFound, res.StatusCode)
			require.Contains(t, res.location(), "/verify-request")
			ck, ok := findCookie(res.Header, tc.name)
			require.True(t, ok, "want %s in %v", tc.name, res.Header.Values("Set-Cookie"))
			require.Equal(t, tc.secure, ck.Secure)
			require.Equal(t, tc.path, ck.Path)
			require.True(t, ck.HttpOnly)
			require.Equal(t, http.SameSiteLaxMode, ck.SameSite)
		})
	}
}
