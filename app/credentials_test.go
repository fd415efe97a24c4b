package app_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/metrics/metricstest"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

const goodPassword = "correct horse battery staple"

// startPw is the password setup: the app on its own URL with a credentials
// provider next to the e-mail one, a settable clock and captured logs.
func startPw(t testing.TB, o envOpts) *env {
	t.Helper()
	o.ownURL, o.logs = true, true
	if o.clock == nil {
		o.clock = &testClock{now: time.Now().UTC().Truncate(time.Second)}
	}
	mutate := o.config
	o.config = func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Type: config.TypeCredentials, ID: "credentials"})
		c.Callbacks.ExposeUserID = true
		if mutate != nil {
			mutate(c)
		}
	}
	return startEnv(t, o)
}

// addPasswordUser stores a user with a password hashed as the app hashes.
func (e *env) addPasswordUser(addr, pw string, verified bool) *models.User {
	e.t.Helper()
	hash := e.hash(pw)
	u := &models.User{Email: &addr}
	if verified {
		now := e.now()
		u.EmailVerified = &now
	}
	require.NoError(e.t, e.app.Store().CreateUserWithPassword(context.Background(), u, hash))
	return u
}

// passwordSignIn is the v4 client's signIn("credentials", {email, password,
// redirect: false}): CSRF dance, then the form it posts, json=true.
func (e *env) passwordSignIn(c *http.Client, addr, pw string, headers ...string) resp {
	e.t.Helper()
	form := url.Values{"email": {addr}, "password": {pw}, "redirect": {"false"},
		"callbackUrl": {e.origin + "/home"}, "csrfToken": {e.csrf(c)}, "json": {"true"}}
	return e.post(c, "/callback/credentials", form, headers...)
}

func TestPasswordSignIn(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startPw(t, b.opts(envOpts{}))
			u := e.addPasswordUser("alice@example.com", goodPassword, true)

			res := e.get(e.browser(), "/providers")
			require.Contains(t, res.body, `"credentials":{"id":"credentials","name":"Credentials","type":"credentials","signinUrl":"`+
				e.base+`/signin/credentials","callbackUrl":"`+e.base+`/callback/credentials"}`)

			c := e.browser()
			res = e.passwordSignIn(c, " Alice@Example.com", goodPassword)
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.JSONEq(t, `{"url":"`+e.origin+`/home"}`, res.body)
			addr, id := e.sessionUser(c)
			require.Equal(t, "alice@example.com", addr)
			require.Equal(t, u.ID, id)
			if b.strategy == config.StrategyDatabase {
				require.EqualValues(t, 1, e.counts().Sessions, "a database session, which next-auth refuses for credentials")
			} else {
				require.EqualValues(t, 0, e.counts().Sessions)
			}

			// Sign out ends it.
			res = e.post(c, "/signout", url.Values{"csrfToken": {e.csrf(c)}, "json": {"true"}})
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Empty(t, e.session(c))

			// The sign-in page's form (no json): a 302 to the callback URL.
			c = e.browser()
			form := url.Values{"email": {"alice@example.com"}, "password": {goodPassword},
				"callbackUrl": {e.origin + "/after"}, "csrfToken": {e.csrf(c)}}
			res = e.post(c, "/callback/credentials", form)
			require.Equal(t, http.StatusFound, res.StatusCode, res.body)
			require.Equal(t, e.origin+"/after", res.location())
			require.Equal(t, "alice@example.com", userEmail(e.session(c)))

			// A JSON body works too (the App Router parses both).
			c = e.browser()
			tok := e.csrf(c)
			req, err := http.NewRequest(http.MethodPost, e.url("/callback/credentials"),
				strings.NewReader(`{"email":"alice@example.com","password":"`+goodPassword+`","csrfToken":"`+tok+`","json":"true"}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			res = e.do(c, req)
			require.Equal(t, http.StatusOK, res.StatusCode, res.body)
			require.Equal(t, "alice@example.com", userEmail(e.session(c)))
		})
	}
}

// Every refusal is the same answer, byte for byte: a wrong password, an
// unknown address, a user without a password, an unverified address.
func TestPasswordRefusalsLookAlike(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startPw(t, envOpts{postgres: pg})
		e.addPasswordUser("alice@example.com", goodPassword, true)
		e.addPasswordUser("unverified@example.com", goodPassword, false)
		e.addUser("OAuth only", "oauth@example.com", "")

		want := `{"url":"` + e.base + `/error?error=CredentialsSignin&provider=credentials"}`
		before := e.counts()
		first := ""
		for _, try := range []struct{ addr, pw string }{
			{"alice@example.com", "not the password"},
			{"nobody@example.com", goodPassword},
			{"oauth@example.com", goodPassword},
			{"unverified@example.com", goodPassword},
		} {
			c := e.browser()
			res := e.passwordSignIn(c, try.addr, try.pw)
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, try.addr)
			require.Equal(t, "application/json", strings.Split(res.Header.Get("Content-Type"), ";")[0])
			require.JSONEq(t, want, res.body, try.addr)
			if first == "" {
				first = res.body
			}
			require.Equal(t, first, res.body, "same bytes for %s", try.addr)
			require.Empty(t, e.session(c))
		}
		after := e.counts()
		require.Equal(t, before.Users, after.Users)
		require.Equal(t, before.Sessions, after.Sessions)
		logs := e.logs.String()
		require.Contains(t, logs, "a***@example.com: wrong password")
		require.Contains(t, logs, "n***@example.com: no such user")
		require.Contains(t, logs, "o***@example.com: the user has no password")
		require.Contains(t, logs, "u***@example.com: e-mail address not verified yet")
		require.NotContains(t, logs, "alice@example.com")
		require.NotContains(t, logs, goodPassword)
	})
}

// The other modes' answers: a plain form post is a 302 to the error URL
// (which bounces to the sign-in page with its message), the v5 client's
// header gets v5's {url}; CSRF is mandatory; GET and POST /signin/credentials
// are next-auth's refusals; nothing 5xx.
func TestPasswordWireAnswers(t *testing.T) {
	e := startPw(t, envOpts{})
	e.addPasswordUser("alice@example.com", goodPassword, true)

	c := e.browser()
	form := url.Values{"email": {"alice@example.com"}, "password": {"wrong password"}, "csrfToken": {e.csrf(c)}}
	res := e.post(c, "/callback/credentials", form)
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, e.base+"/error?error=CredentialsSignin&provider=credentials", res.location())
	res = e.get(c, res.location())
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, e.base+"/signin?error=CredentialsSignin", res.location())
	res = e.get(c, res.location())
	require.Contains(t, res.body, "Sign in failed. Check the details you provided are correct.")

	res = e.post(c, "/callback/credentials", form, "X-Auth-Return-Redirect", "1")
	require.Equal(t, http.StatusOK, res.StatusCode)
	wantV5 := e.base + "/signin?code=credentials&error=CredentialsSignin"
	require.JSONEq(t, `{"url":"`+wantV5+`"}`, res.body)
	require.Equal(t, wantV5, res.location())

	// Missing or wrong CSRF: back to the sign-in page, password not checked.
	for _, tok := range []string{"", "0123"} {
		form := url.Values{"email": {"alice@example.com"}, "password": {goodPassword}, "csrfToken": {tok}}
		res = e.post(c, "/callback/credentials", form)
		require.Equal(t, http.StatusFound, res.StatusCode)
		require.Equal(t, e.base+"/signin?csrf=true", res.location())
		form.Set("json", "true")
		res = e.post(c, "/callback/credentials", form)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.JSONEq(t, `{"url":"`+e.base+`/signin?csrf=true"}`, res.body)
	}
	// Without any cookie at all (no CSRF cookie): the same, not a form_post bounce.
	res = e.rawDo(http.MethodPost, "/callback/credentials", "", strings.NewReader("email=alice%40example.com&password=x"),
		"Content-Type", "application/x-www-form-urlencoded")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, e.base+"/signin?csrf=true", res.location())
	require.Empty(t, e.session(c))

	// GET of the callback: next-auth's 400 "not supported", no cookie.
	res = e.rawDo(http.MethodGet, "/callback/credentials?email=alice%40example.com&password=x", "", nil)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, res.body, "not supported")
	require.Empty(t, res.Header.Values("Set-Cookie"))

	// POST /signin/credentials: a redirect to the sign-in page, as v4.
	res = e.post(c, "/signin/credentials", url.Values{"csrfToken": {e.csrf(c)}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, e.base+"/signin", res.location())
}

// Bad input is refused with CredentialsSignin (or 413 past the body limit),
// cheaply, changing nothing. "Cheaply" is seen through a hasher that never
// gets a slot: input that reached Argon2id would be answered TryLater (503),
// so each refusal below that is 401 was made before hashing.
func TestPasswordBadInput(t *testing.T) {
	never := password.Default().Limit(0, time.Millisecond) // every hash is ErrBusy
	e := startPw(t, envOpts{hasher: never, config: func(c *config.Config) { c.MaxBodyBytes = 4 << 20 }})
	hash, err := cheapHasher(t).Hash(goodPassword)
	require.NoError(t, err)
	alice := "alice@example.com"
	now := e.now()
	require.NoError(t, e.app.Store().CreateUserWithPassword(context.Background(), &models.User{Email: &alice, EmailVerified: &now}, hash))
	want := `{"url":"` + e.base + `/error?error=CredentialsSignin&provider=credentials"}`
	busy := `{"url":"` + e.base + `/error?error=TryLater&provider=credentials"}`
	signIn := func(form url.Values, target string) resp {
		c := e.browser()
		form.Set("csrfToken", e.csrf(c))
		form.Set("json", "true")
		res := e.post(c, target, form)
		require.Empty(t, e.session(c))
		return res
	}
	// The right password is hashed: with no slot it is TryLater, which is
	// what any case below would answer had it reached the hasher.
	res := signIn(url.Values{"email": {alice}, "password": {goodPassword}}, "/callback/credentials")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, res.body)
	require.JSONEq(t, busy, res.body)

	huge := strings.Repeat("a", 1<<20)
	for name, form := range map[string]url.Values{
		"1 MB password":     {"email": {alice}, "password": {huge}},
		"NUL":               {"email": {alice}, "password": {goodPassword + "\x00"}},
		"malformed UTF-8":   {"email": {alice}, "password": {"correct horse \xff battery"}},
		"no password":       {"email": {alice}},
		"empty password":    {"email": {alice}, "password": {""}},
		"no e-mail":         {"password": {goodPassword}},
		"not an address":    {"email": {"alice"}, "password": {goodPassword}},
		"huge e-mail":       {"email": {huge + "@example.com"}, "password": {goodPassword}},
		"password in query": {"email": {alice}},
	} {
		t.Run(name, func(t *testing.T) {
			target := "/callback/credentials"
			if name == "password in query" {
				target += "?password=" + url.QueryEscape(goodPassword)
			}
			res := signIn(form, target)
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, "refused before hashing: %s", res.body)
			require.JSONEq(t, want, res.body)
		})
	}
	// Two passwords, a wrong one first: the right one after it does not
	// sign in.
	pw := startPw(t, envOpts{})
	pw.addPasswordUser(alice, goodPassword, true)
	c := pw.browser()
	res = pw.post(c, "/callback/credentials", url.Values{"csrfToken": {pw.csrf(c)}, "json": {"true"}, "email": {alice}, "password": {"wrong one", goodPassword}})
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
	require.JSONEq(t, `{"url":"`+pw.base+`/error?error=CredentialsSignin&provider=credentials"}`, res.body)
	require.Empty(t, pw.session(c))
	// Past max_body_bytes: 413 before anything is read.
	c = pw.browser()
	res = pw.post(c, "/callback/credentials", url.Values{"csrfToken": {pw.csrf(c)}, "email": {"a@example.com"}, "password": {huge}})
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	// A JSON body whose password is not a string is a missing password.
	c = e.browser()
	req, err := http.NewRequest(http.MethodPost, e.url("/callback/credentials"),
		strings.NewReader(`{"email":"alice@example.com","password":12345678,"csrfToken":"`+e.csrf(c)+`","json":"true"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res = e.do(c, req)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
	require.JSONEq(t, want, res.body)
	require.EqualValues(t, 0, e.counts().Sessions)
}

// Repeated failures back off exponentially per account and client; the
// right password is refused while blocked; another client is not blocked;
// blocks end by themselves; a success resets the pair.
func TestPasswordThrottle(t *testing.T) {
	eachDatabase(t, testPasswordThrottle)
}

func testPasswordThrottle(t *testing.T, pg bool) {
	e := startPw(t, envOpts{postgres: pg, config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }})
	e.addPasswordUser("alice@example.com", goodPassword, true)
	from := func(ip, pw string) int {
		return e.passwordSignIn(e.browser(), "alice@example.com", pw, "X-Forwarded-For", ip).StatusCode
	}
	for i := range 6 {
		require.Equal(t, http.StatusUnauthorized, from("203.0.113.7", "wrong password"), "failure %d", i+1)
	}
	// The 6th failure blocked the pair for 1 s: even the right password is refused.
	require.Equal(t, http.StatusUnauthorized, from("203.0.113.7", goodPassword))
	require.Contains(t, e.logs.String(), "too many failed password sign-ins: account and client blocked")
	// The owner elsewhere is not affected.
	require.Equal(t, http.StatusOK, from("198.51.100.9", goodPassword))
	// The block ends by itself; attempts while blocked did not extend it.
	e.clock.Add(time.Second)
	require.Equal(t, http.StatusUnauthorized, from("203.0.113.7", "wrong password"), "7th failure: 2 s")
	e.clock.Add(time.Second)
	require.Equal(t, http.StatusUnauthorized, from("203.0.113.7", goodPassword), "still blocked")
	e.clock.Add(time.Second)
	require.Equal(t, http.StatusOK, from("203.0.113.7", goodPassword))
	// The success reset the pair: five free failures again.
	for range 5 {
		require.Equal(t, http.StatusUnauthorized, from("203.0.113.7", "wrong password"))
	}
	require.Equal(t, http.StatusOK, from("203.0.113.7", goodPassword))
	require.NotContains(t, e.logs.String(), "alice@example.com")
}

// The throttle's counters live in the database. When they cannot be
// reached (their table gone: an outage that spares the user lookup) no
// password is checked, and the right password is answered "try again"
// (503, TryLater), not "wrong password" (401).
func TestPasswordThrottleCountersDown(t *testing.T) {
	e := startPw(t, envOpts{})
	e.addPasswordUser("alice@example.com", goodPassword, true)
	require.NoError(t, e.app.Store().DB().Exec("DROP TABLE password_throttles").Error)
	res := e.passwordSignIn(e.browser(), "alice@example.com", goodPassword)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, res.body)
	require.Equal(t, "5", res.Header.Get("Retry-After"))
	require.Contains(t, res.body, "TryLater")
	require.NotContains(t, res.body, "CredentialsSignin")
}

// The back-off is capped and counts expire: no lasting lock-out.
func TestPasswordThrottleIsCapped(t *testing.T) {
	e := startPw(t, envOpts{config: func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }})
	e.addPasswordUser("alice@example.com", goodPassword, true)
	from := func(ip, pw string) int {
		return e.passwordSignIn(e.browser(), "alice@example.com", pw, "X-Forwarded-For", ip).StatusCode
	}
	// An attacker spread over many clients: past the account's 20 free
	// failures the account is blocked for clients it never signed in from…
	for i := range 40 {
		from("203.0.113."+strconv.Itoa(i+1), "wrong password")
		e.clock.Add(time.Second)
	}
	require.Equal(t, http.StatusUnauthorized, from("192.0.2.1", goodPassword), "a new client waits")
	require.Contains(t, e.logs.String(), "account blocked")
	// …for at most five minutes.
	e.clock.Add(5 * time.Minute)
	require.Equal(t, http.StatusOK, from("192.0.2.1", goodPassword))
	// A client the account signed in from is exempt from the account block.
	for i := range 40 {
		from("203.0.113."+strconv.Itoa(i+1), "wrong password")
	}
	require.Equal(t, http.StatusOK, from("192.0.2.1", goodPassword))
}

// A hash made with other parameters is replaced at the next sign-in.
func TestPasswordRehash(t *testing.T) {
	e := startPw(t, envOpts{realHasher: true})
	weak, err := password.New(password.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})
	require.NoError(t, err)
	old, err := weak.Hash(goodPassword)
	require.NoError(t, err)
	now := e.now()
	addr := "alice@example.com"
	u := &models.User{Email: &addr, EmailVerified: &now}
	require.NoError(t, e.app.Store().CreateUserWithPassword(context.Background(), u, old))

	require.Equal(t, http.StatusOK, e.passwordSignIn(e.browser(), addr, goodPassword).StatusCode)
	stored, err := e.app.Store().PasswordHash(context.Background(), u.ID)
	require.NoError(t, err)
	require.NotEqual(t, old, stored)
	require.Contains(t, stored, "$argon2id$v=19$m=19456,t=2,p=1$")
	require.Equal(t, http.StatusOK, e.passwordSignIn(e.browser(), addr, goodPassword).StatusCode, "the new hash works")
}

// The sign-in page has the password form, posting to the callback, and
// links to sign-up (unless turned off) and reset.
func TestPasswordSignInPage(t *testing.T) {
	e := startPw(t, envOpts{})
	page := e.get(e.browser(), "/signin").body
	require.Contains(t, page, `<form action="`+e.base+`/callback/credentials" method="POST">`)
	require.Contains(t, page, `type="password" name="password"`)
	require.Contains(t, page, `name="email"`)
	require.Contains(t, page, `href="`+e.base+`/signup"`)
	require.Contains(t, page, `href="`+e.base+`/reset"`)
	require.Contains(t, page, "Sign in with Credentials")

	off := false
	e = startPw(t, envOpts{config: func(c *config.Config) {
		for i := range c.Providers {
			if c.Providers[i].Type == config.TypeCredentials {
				c.Providers[i].Signup, c.Providers[i].Name = &off, "Password"
			}
		}
	}})
	page = e.get(e.browser(), "/signin").body
	require.NotContains(t, page, "/signup")
	require.Contains(t, page, `href="`+e.base+`/reset"`)
	require.Contains(t, page, "Sign in with Password")
}

// The SignIn hook sees password sign-ins (type "credentials"): a refusal is
// next-auth's 403 AccessDenied, a redirect goes where the hook says (through
// the redirect policy), and neither starts a session.
func TestPasswordSignInHook(t *testing.T) {
	var mu sync.Mutex
	var seen []signin.SignInInput
	hooks := &signin.Hooks{SignIn: func(_ context.Context, in signin.SignInInput) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, in)
		switch in.Email {
		case "denied@example.com":
			return false, ""
		case "elsewhere@example.com":
			return false, "/somewhere"
		}
		return true, ""
	}}
	e := startPw(t, envOpts{hooks: hooks})
	for _, addr := range []string{"denied@example.com", "elsewhere@example.com", "ok@example.com"} {
		e.addPasswordUser(addr, goodPassword, true)
	}
	c := e.browser()
	res := e.passwordSignIn(c, "denied@example.com", goodPassword)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.JSONEq(t, `{"url":"`+e.base+`/error?error=AccessDenied"}`, res.body)
	res = e.form(c, "/callback/credentials", "email", "denied@example.com", "password", goodPassword, "lang", "fr")
	require.Equal(t, e.base+"/error?error=AccessDenied&lang=fr", res.location(), "from a French page: the error page in French")
	res = e.passwordSignIn(c, "elsewhere@example.com", goodPassword)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.JSONEq(t, `{"url":"`+e.origin+`/somewhere"}`, res.body)
	require.Empty(t, e.session(c))
	require.Equal(t, http.StatusOK, e.passwordSignIn(c, "ok@example.com", goodPassword).StatusCode)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 4)
	require.Equal(t, "credentials", seen[3].Type)
	require.Equal(t, "credentials", seen[3].Provider)
	require.True(t, seen[3].EmailVerified)
}

// Password sign-ins are counted like the others: success, and every
// refusal as CredentialsSignin.
func TestPasswordSignInMetrics(t *testing.T) {
	e := startPw(t, envOpts{config: func(c *config.Config) { c.Metrics.Listen = "127.0.0.1:0" }})
	e.addPasswordUser("alice@example.com", goodPassword, true)
	require.Equal(t, http.StatusOK, e.passwordSignIn(e.browser(), "alice@example.com", goodPassword).StatusCode)
	require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(e.browser(), "alice@example.com", "wrong password").StatusCode)
	require.Equal(t, http.StatusUnauthorized, e.passwordSignIn(e.browser(), "nobody@example.com", goodPassword).StatusCode)
	rec := httptest.NewRecorder()
	e.app.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	s := metricstest.Parse(t, bytes.NewReader(rec.Body.Bytes()))
	require.Equal(t, 1.0, s.Value("latchkey_signins_total", "provider", "credentials", "outcome", "success"))
	require.Equal(t, 2.0, s.Value("latchkey_signins_total", "provider", "credentials", "outcome", "CredentialsSignin"))
}

// Two instances on one PostgreSQL database share the throttle's counts: a
// guesser alternating between them is blocked as on one, and the password
// works on either once the block ends.
func TestPasswordThrottleSharedByInstances(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	trust := func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32"} }
	a := startPw(t, envOpts{postgres: true, clock: clock, config: trust})
	b := startPw(t, envOpts{clock: clock, config: func(c *config.Config) { trust(c); c.DatabaseURL = a.cfg.DatabaseURL }})
	a.addPasswordUser("alice@example.com", goodPassword, true)
	try := func(e *env, pw string) int {
		return e.passwordSignIn(e.browser(), "alice@example.com", pw, "X-Forwarded-For", "203.0.113.7").StatusCode
	}
	for i := range 6 {
		require.Equal(t, http.StatusUnauthorized, try([]*env{a, b}[i%2], "wrong password"), "failure %d", i+1)
	}
	require.Equal(t, http.StatusUnauthorized, try(a, goodPassword), "blocked on A")
	require.Equal(t, http.StatusUnauthorized, try(b, goodPassword), "blocked on B")
	clock.Add(time.Second)
	require.Equal(t, http.StatusOK, try(b, goodPassword))
}
