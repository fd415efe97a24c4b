package app_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// Address normalisation over HTTP: valid input is mailed to the normalised
// address; invalid input is EmailSignin with nothing stored or sent.
func TestEmailNormalisation(t *testing.T) {
	e := startMail(t, envOpts{})
	sent := 0
	for in, want := range map[string]string{
		"  Alice@Example.COM\t":    "alice@example.com",
		"bob@example.com,evil.com": "bob@example.com",
		"ｃａｒｏｌ@ｅｘａｍｐｌｅ．ｃｏｍ":        "carol@example.com",
	} {
		res := e.requestLink(e.browser(), in, nil)
		require.Equal(t, e.base+"/verify-request?provider=email&type=email", res.location(), "input %q", in)
		sent++
		m, _ := e.mail(sent)
		require.Equal(t, []string{want}, m.To, "input %q", in)
		require.Equal(t, want, linkQuery(t, e.link(sent)).Get("email"))
	}
	for _, in := range []string{
		"", "alice", "alice@localhost", "a@b@example.com", `"a"@example.com`, "a b@example.com",
		"alice@example.com\r\nBcc: victim@example.org", "@example.com", "alice@",
		// Not UTF-8 (%ff, %fe): refused, not mailed to the U+FFFD address
		// lower-casing would make of both.
		"\xff@example.com", "\xfe@example.com", "alice@exa\xffmple.com", "ali\x00ce@example.com",
		// Mailed to alice@example.com under another name each: a fresh
		// per-address budget for her inbox, an account per variant.
		"alice@example.com(2)", "x<alice@example.com>", "x:alice@example.com;",
	} {
		e.requireError(e.requestLink(e.browser(), in, nil), "EmailSignin")
	}
	require.EqualValues(t, sent, e.tokens())
	require.Len(t, e.smtp.Mails(), sent)
}

func TestEmailRateLimitPerAddress(t *testing.T) {
	e := startMail(t, envOpts{})
	for range 5 { // the default: 5 per address per hour
		require.Equal(t, http.StatusFound, e.requestLink(e.browser(), "alice@example.com", nil).StatusCode)
	}
	e.requireError(e.requestLink(e.browser(), "ALICE@example.com", nil), "EmailSignin")
	require.Contains(t, e.logs.String(), "rate limited")
	// Counted per (address, client); the logged reason never names the address.
	require.Contains(t, e.logs.String(), "per-address limit reached from 127.0.0.1")
	requireNoAddressInRateLogs(t, e, "alice@example.com")
	require.Len(t, e.smtp.Mails(), 5)
	require.EqualValues(t, 5, e.tokens())

	// Other addresses are not affected; after window/5 one more is allowed.
	require.Equal(t, e.base+"/verify-request?provider=email&type=email", e.requestLink(e.browser(), "bob@example.com", nil).location())
	e.clock.Add(12 * time.Minute)
	require.Equal(t, e.base+"/verify-request?provider=email&type=email", e.requestLink(e.browser(), "alice@example.com", nil).location())
	e.requireError(e.requestLink(e.browser(), "alice@example.com", nil), "EmailSignin")
}

func TestEmailRateLimitPerIP(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) {
		p.RateLimit = config.RateLimit{PerIP: 3, PerAddress: 10, Window: config.Duration(10 * time.Minute)}
	}})
	for _, addr := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		require.Equal(t, http.StatusFound, e.requestLink(e.browser(), addr, nil).StatusCode)
	}
	e.requireError(e.requestLink(e.browser(), "d@example.com", nil), "EmailSignin")
	require.Contains(t, e.logs.String(), "per-IP limit reached for 127.0.0.1")
	require.Len(t, e.smtp.Mails(), 3)
	e.clock.Add(10 * time.Minute) // a whole window later the bucket is full again
	for _, addr := range []string{"d@example.com", "e@example.com", "f@example.com"} {
		require.Equal(t, e.base+"/verify-request?provider=email&type=email", e.requestLink(e.browser(), addr, nil).location())
	}
}

// X-Forwarded-For is not trusted: a client cannot pick its own rate-limit key.
func TestEmailRateLimitIgnoresForwardedFor(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) { p.RateLimit = config.RateLimit{PerIP: 2} }})
	for i, addr := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		c := e.browser()
		form := url.Values{"csrfToken": {e.csrf(c)}, "email": {addr}}
		res := e.post(c, "/signin/email", form,
			"X-Forwarded-For", "203.0.113."+string(rune('1'+i)),
			"X-Real-IP", "203.0.113."+string(rune('1'+i)))
		if i < 2 {
			require.Equal(t, e.base+"/verify-request?provider=email&type=email", res.location())
		} else {
			e.requireError(res, "EmailSignin")
		}
	}
}

// Behind a configured proxy, X-Forwarded-For names the client: clients
// behind one proxy get separate per-IP budgets, and a client still cannot
// choose its key (the proxy's appended entry is the one used).
func TestEmailRateLimitTrustedProxy(t *testing.T) {
	e := startMail(t, envOpts{
		email:  func(p *config.Provider) { p.RateLimit = config.RateLimit{PerIP: 1} },
		config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32", "::1/128"} },
	})
	send := func(xff, addr string) resp {
		c := e.browser()
		return e.post(c, "/signin/email", url.Values{"csrfToken": {e.csrf(c)}, "email": {addr}}, "X-Forwarded-For", xff)
	}
	verify := e.base + "/verify-request?provider=email&type=email"
	require.Equal(t, verify, send("203.0.113.1", "a@example.com").location())
	require.Equal(t, verify, send("203.0.113.2", "b@example.com").location(), "another client behind the proxy has its own budget")
	e.requireError(send("203.0.113.1", "c@example.com"), "EmailSignin")
	// A spoofed first entry does not help: the proxy-appended last one counts.
	e.requireError(send("198.51.100.9, 203.0.113.1", "d@example.com"), "EmailSignin")
}

func TestEmailRateLimitDisabled(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) { p.RateLimit.Disabled = true }})
	for range 8 {
		require.Equal(t, e.base+"/verify-request?provider=email&type=email", e.requestLink(e.browser(), "alice@example.com", nil).location())
	}
	require.Len(t, e.smtp.Mails(), 8)
}

// HEAD (what some link scanners send) never consumes a link: the router
// answers next-auth's 400 before any handler runs.
func TestEmailHeadDoesNotConsume(t *testing.T) {
	e := startMail(t, envOpts{})
	c := e.browser()
	link := e.emailLink(c, "alice@example.com", e.origin+"/")
	for _, b := range []*http.Client{e.browser(), c} { // a scanner, and the bound browser itself
		req, err := http.NewRequest(http.MethodHead, link, nil)
		require.NoError(t, err)
		res := e.do(b, req)
		require.Equal(t, http.StatusBadRequest, res.StatusCode)
	}
	require.EqualValues(t, 1, e.tokens())
	require.Equal(t, http.StatusFound, e.get(c, link).StatusCode)
}

var mailHiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)

// mailForm is the confirm page's form: action and hidden fields.
func mailForm(t testing.TB, body string) (string, url.Values) {
	t.Helper()
	m := regexp.MustCompile(`<form action="([^"]+)" method="POST">`).FindStringSubmatch(body)
	require.NotNil(t, m, "no form in %s", body)
	fields := url.Values{}
	for _, f := range mailHiddenRE.FindAllStringSubmatch(body, -1) {
		fields.Set(f[1], html.UnescapeString(f[2]))
	}
	return html.UnescapeString(m[1]), fields
}

// With confirm: true, GET of the link only shows a page whose button POSTs
// it (with CSRF), even in the browser that asked for it: scanners that
// fetch links spend nothing. A made-up token has nothing to confirm: it is
// the Verification error at once, as the button would give.
func TestEmailConfirmPage(t *testing.T) {
	e := startMail(t, envOpts{email: func(p *config.Provider) { p.Confirm = true }})
	c := e.browser()
	link := e.emailLink(c, "alice@example.com", e.origin+"/after")
	q := linkQuery(t, link)

	scanner := e.get(e.browser(), link)
	require.Equal(t, http.StatusOK, scanner.StatusCode)
	require.Contains(t, scanner.Header.Get("Cache-Control"), "no-store")
	e.requireError(e.get(e.browser(), e.base+"/callback/email?token="+strings.Repeat("ab", 32)+"&email=alice%40example.com"), "Verification")
	require.EqualValues(t, 1, e.tokens())
	require.EqualValues(t, 0, e.counts().Users)

	page := e.get(c, link)
	e.requireConfirmPage(c, page, "alice@example.com")
	action, fields := mailForm(t, page.body)
	require.Equal(t, e.base+"/callback/email", action)
	require.Equal(t, q.Get("token"), fields.Get("token"))
	require.Empty(t, fields.Get("email"), "the token alone names the address")
	require.Equal(t, e.origin+"/after", fields.Get("callbackUrl"))
	require.Len(t, fields.Get("csrfToken"), 64)

	// Without the CSRF token the POST is refused with the page again (still
	// naming the stored address, not a posted one), unspent.
	noCSRF := url.Values{"token": {fields.Get("token")}, "email": {"mallory@example.com"}}
	res := e.post(c, action, noCSRF)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Contains(t, res.body, "expired")
	require.Contains(t, res.body, "<strong>alice@example.com</strong>")
	require.NotContains(t, res.body, "mallory")
	res = e.post(e.browser(), action, fields) // right form, other browser: cookie missing
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.EqualValues(t, 1, e.tokens())

	res = e.post(c, action, fields)
	require.Equal(t, http.StatusFound, res.StatusCode, res.body)
	require.Equal(t, e.origin+"/after", res.location())
	addr, _ := e.sessionUser(c)
	require.Equal(t, "alice@example.com", addr)
	require.Zero(t, e.tokens())
	ck, ok := findCookie(res.Header, bindingCookie)
	require.True(t, ok, "the spent link's binding goes with the click too")
	require.Negative(t, ck.MaxAge)

	// Sign-in rotated the CSRF token: the page's old one is refused outright,
	// and with a fresh one the spent link is a Verification error.
	stale := e.post(c, action, url.Values{"csrfToken": {fields.Get("csrfToken")}, "token": {fields.Get("token")}})
	require.Equal(t, http.StatusForbidden, stale.StatusCode)
	e.requireError(e.post(c, action, url.Values{"csrfToken": {e.csrf(c)}, "token": {fields.Get("token")}}), "Verification")
}

// Without confirm, the POST form of the callback still needs CSRF.
func TestEmailCallbackPostNeedsCSRF(t *testing.T) {
	e := startMail(t, envOpts{})
	link := e.emailLink(e.browser(), "alice@example.com", e.origin+"/")
	q := linkQuery(t, link)
	res := e.post(e.browser(), e.base+"/callback/email", url.Values{"token": {q.Get("token")}, "email": {q.Get("email")}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.EqualValues(t, 1, e.tokens())
}

func TestEmailSignInNeedsCSRF(t *testing.T) {
	e := startMail(t, envOpts{})
	res := e.post(e.browser(), e.base+"/signin/email", url.Values{"email": {"alice@example.com"}, "csrfToken": {strings.Repeat("f", 64)}})
	require.Equal(t, e.base+"/signin?csrf=true", res.location())
	require.Zero(t, e.tokens())
	require.Empty(t, e.smtp.Mails())
}

// The SignIn hook is asked as next-auth asks it: once before sending (a
// verification request), once when the link is used.
func TestEmailSignInHook(t *testing.T) {
	var mu sync.Mutex
	var calls []signin.SignInInput
	deny := map[bool]bool{} // by VerificationRequest
	hooks := &signin.Hooks{SignIn: func(_ context.Context, in signin.SignInInput) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, in)
		if in.Email == "redirect@example.com" {
			return false, "/somewhere"
		}
		return !deny[in.VerificationRequest], ""
	}}
	e := startMail(t, envOpts{hooks: hooks})
	call := func(i int) signin.SignInInput { // i < 0 counts from the end
		mu.Lock()
		defer mu.Unlock()
		if i < 0 {
			i += len(calls)
		}
		return calls[i]
	}
	setDeny := func(request, callback bool) {
		mu.Lock()
		defer mu.Unlock()
		deny[true], deny[false] = request, callback
	}

	setDeny(true, false)
	e.requireError(e.requestLink(e.browser(), "Alice@example.com", nil), "AccessDenied")
	require.Zero(t, e.tokens())
	require.Empty(t, e.smtp.Mails())
	first := call(0)
	require.Equal(t, signin.SignInInput{User: first.User, Provider: "email", Type: "email", Email: "alice@example.com", EmailVerified: true, VerificationRequest: true}, first)
	require.Equal(t, "alice@example.com", first.User.ID, "unknown users are stand-ins whose id is the address")

	res := e.requestLink(e.browser(), "redirect@example.com", nil)
	require.Equal(t, e.origin+"/somewhere", res.location())
	require.Zero(t, e.tokens())

	// Refused at the callback: AccessDenied, the link stays valid, nothing created.
	setDeny(false, true)
	c := e.browser()
	link := e.emailLink(c, "alice@example.com", e.origin+"/")
	e.requireError(e.get(c, link), "AccessDenied")
	last := call(-1)
	require.False(t, last.VerificationRequest)
	require.Equal(t, "alice@example.com", last.Email)
	require.EqualValues(t, 1, e.tokens())
	require.EqualValues(t, 0, e.counts().Users)

	setDeny(false, false)
	require.Equal(t, http.StatusFound, e.get(c, link).StatusCode)
	require.EqualValues(t, 1, e.counts().Users)
}

// callbacks.allowed_email_domains (the default SignIn hook) applies to
// e-mail sign-in; a domain listed with its Unicode name admits an address
// written with the xn-- one, and the reverse.
func TestEmailAllowedDomains(t *testing.T) {
	e := startMail(t, envOpts{config: func(c *config.Config) {
		c.Callbacks.AllowedEmailDomains = []string{"example.com", "Bücher.example", "xn--mnchen-3ya.de"}
	}})
	e.requireError(e.requestLink(e.browser(), "eve@evil.test", nil), "AccessDenied")
	e.requireError(e.requestLink(e.browser(), "eve@bucher.example", nil), "AccessDenied")
	require.Equal(t, http.StatusFound, e.requestLink(e.browser(), "alice@example.com", nil).StatusCode)
	require.Equal(t, http.StatusFound, e.requestLink(e.browser(), "ada@xn--bcher-kva.example", nil).StatusCode)
	require.Equal(t, http.StatusFound, e.requestLink(e.browser(), "max@münchen.de", nil).StatusCode)
	require.Len(t, e.smtp.Mails(), 3)
}

// Hostile or malformed callback input is a clean error, never a 500.
func TestEmailCallbackBadInput(t *testing.T) {
	e := startMail(t, envOpts{})
	for _, q := range []string{
		"token=" + strings.Repeat("x", 4000),
		"token=%00%01&email=%FF",
		"token[]=a&email=a%40b.c",
		"token=abc&email=",
		"token=abc&callbackUrl=javascript:alert(1)",
	} {
		res := e.get(e.browser(), e.base+"/callback/email?"+q)
		require.Equal(t, http.StatusFound, res.StatusCode, q)
		require.True(t, strings.HasPrefix(res.location(), e.base+"/error?error="), "%s → %s", q, res.location())
	}
	res := e.post(e.browser(), e.base+"/callback/email", url.Values{"token": {"abc"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
}

// The default per-IP budget is 20 requests an hour, across addresses.
func TestEmailRateLimitDefaultPerIP(t *testing.T) {
	e := startMail(t, envOpts{})
	verify := e.base + "/verify-request?provider=email&type=email"
	for i := range 20 {
		addr := fmt.Sprintf("user%d@example.com", i)
		require.Equal(t, verify, e.requestLink(e.browser(), addr, nil).location(), addr)
	}
	e.requireError(e.requestLink(e.browser(), "user20@example.com", nil), "EmailSignin")
	require.Len(t, e.smtp.Mails(), 20)
	e.clock.Add(time.Hour)
	require.Equal(t, verify, e.requestLink(e.browser(), "user20@example.com", nil).location(), "the budget refills")
}
