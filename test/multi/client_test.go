package multi_test

// The Go package for backends (package client) against a real latchkey: a
// backend behind client.Middleware, asking latchkey's GET /session through
// a counting reverse proxy (remote mode) or decrypting the cookie itself
// (local mode), used by a browser that signed in through the real e-mail
// flow.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/client"
	"github.com/latchkey-auth/latchkey/client/echoauth"
)

// sessionProxy stands between the backend and one latchkey instance: it
// counts the GET /session requests that reach latchkey, keeps the Cookie
// headers they carried, and can hold each one for a while (so concurrent
// lookups surely overlap).
type sessionProxy struct {
	url     string // the proxy's origin + basePath: the backend's RemoteOptions.URL
	lookups atomic.Int64
	delay   atomic.Int64 // time.Duration to hold each /session request
	mu      sync.Mutex
	cookies []string
}

func newSessionProxy(t *testing.T, in *instance) *sessionProxy {
	t.Helper()
	p := &sessionProxy{}
	rp := httputil.NewSingleHostReverseProxy(mustURL(t, in.origin))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == basePath+"/session" {
			p.lookups.Add(1)
			p.mu.Lock()
			p.cookies = append(p.cookies, r.Header.Values("Cookie")...)
			p.mu.Unlock()
			time.Sleep(time.Duration(p.delay.Load()))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL + basePath
	return p
}

func (p *sessionProxy) sentCookies() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.cookies, "\n")
}

// backend is an app protected by the middleware: /api/me answers the user
// as JSON or 401; /page redirects to sign in (given o.SignInBase); /public serves anybody and
// says who it sees.
func backend(t *testing.T, resolver client.Resolver, o client.Options) string {
	t.Helper()
	api, err := client.New(resolver, o)
	require.NoError(t, err)
	pages := api
	if o.SignInBase != "" {
		o.Redirect = true
		pages, err = client.New(resolver, o)
		require.NoError(t, err)
	}
	me := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := client.UserFrom(r.Context())
		if !ok {
			_, _ = w.Write([]byte("nobody"))
			return
		}
		_ = json.NewEncoder(w).Encode(u)
	})
	mux := http.NewServeMux()
	mux.Handle("/api/me", api.RequireUser(me))
	mux.Handle("/page", pages.RequireUser(me))
	mux.Handle("/public", api.Handler(me))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// me is what the backend answered at path for b: the status and the user.
func me(t *testing.T, b *browser, target string) (int, client.User) {
	t.Helper()
	r := b.get(target)
	var u client.User
	if r.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal([]byte(r.body), &u), r.body)
	}
	return r.StatusCode, u
}

// withCookie is a browser holding only the given cookie for 127.0.0.1.
func withCookie(c *cluster, name, value string) *browser {
	b := c.browser()
	b.client.Jar.SetCookies(mustURL(c.t, "http://127.0.0.1/"), []*http.Cookie{{Name: name, Value: value, Path: "/"}})
	return b
}

// Remote mode, database strategy: the backend sees the signed-in user,
// forwards nothing but the session cookie, refuses or redirects everybody
// else without a foreign callback, sees a sign-out within the cache's time
// to live, collapses concurrent lookups, and fails closed when latchkey
// stops.
func TestClientRemoteDatabaseStrategy(t *testing.T) {
	c := startCluster(t, clusterOpts{instances: 1})
	a := c.nodes[0]
	proxy := newSessionProxy(t, a)
	const ttl = 2 * time.Second
	remote, err := client.NewRemote(client.RemoteOptions{URL: proxy.url, CacheTTL: ttl, Timeout: 5 * time.Second})
	require.NoError(t, err)
	app := backend(t, remote, client.Options{SignInBase: c.base, PublicOrigin: "https://app.example.com"})

	br := c.browser()
	c.signInByEmail(br, a, "remy@example.com")
	br.client.Jar.SetCookies(mustURL(t, app), []*http.Cookie{{Name: "app_pref", Value: "private-to-the-app", Path: "/"}})
	status, u := me(t, br, app+"/api/me")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "remy@example.com", u.Email)
	require.NotEmpty(t, u.ID, "expose_user_id is on in the harness")
	require.True(t, u.Expires.After(time.Now().Add(24*time.Hour)), "expires: %s", u.Expires)
	require.EqualValues(t, 1, proxy.lookups.Load())
	for range 5 {
		status, _ = me(t, br, app+"/api/me")
		require.Equal(t, http.StatusOK, status)
	}
	require.EqualValues(t, 1, proxy.lookups.Load(), "answered from the cache")
	sent := proxy.sentCookies()
	require.Contains(t, sent, sessionCookie+"=")
	require.NotContains(t, sent, "app_pref", "the app's own cookie never reaches latchkey")
	require.NotContains(t, sent, "csrf-token", "nor latchkey's other cookies")

	t.Run("signed out: 401, redirect to sign in, no lookup", func(t *testing.T) {
		before := proxy.lookups.Load()
		nobody := c.browser()
		status, _ := me(t, nobody, app+"/api/me")
		require.Equal(t, http.StatusUnauthorized, status)
		require.Equal(t, "nobody", nobody.get(app+"/public").body)
		req, err := http.NewRequest(http.MethodGet, app+"/page?x=1&y=%2F", nil)
		require.NoError(t, err)
		req.Host = "evil.example" // the client's choice: never believed
		r, err := nobody.do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusFound, r.StatusCode)
		require.Equal(t, c.publicURL("/signin?callbackUrl="+url.QueryEscape("https://app.example.com/page?x=1&y=%2F")), r.location())
		require.Equal(t, before, proxy.lookups.Load(), "no cookie, no lookup")
	})

	t.Run("forged cookie: 401, the answer cached briefly", func(t *testing.T) {
		before := proxy.lookups.Load()
		forged := withCookie(c, sessionCookie, "00000000-forged-token")
		for range 3 {
			status, _ := me(t, forged, app+"/api/me")
			require.Equal(t, http.StatusUnauthorized, status)
		}
		require.Equal(t, before+1, proxy.lookups.Load(), "one lookup, then the negative answer is reused")
	})

	t.Run("concurrent identical lookups are collapsed", func(t *testing.T) {
		uncached, err := client.NewRemote(client.RemoteOptions{URL: proxy.url, CacheTTL: -1, NegativeCacheTTL: -1, Timeout: 10 * time.Second})
		require.NoError(t, err)
		plain := backend(t, uncached, client.Options{})
		proxy.delay.Store(int64(time.Second))
		defer proxy.delay.Store(0)
		before := proxy.lookups.Load()
		const n = 20
		var start, done sync.WaitGroup
		start.Add(1)
		codes := make([]int, n)
		errs := make([]error, n)
		for i := range n {
			done.Add(1)
			go func() {
				defer done.Done()
				req, err := http.NewRequest(http.MethodGet, plain+"/api/me", nil)
				if err != nil {
					errs[i] = err
					return
				}
				start.Wait()
				r, err := br.do(req)
				codes[i], errs[i] = r.StatusCode, err
			}()
		}
		start.Done()
		done.Wait()
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, http.StatusOK, codes[i])
		}
		got := proxy.lookups.Load() - before
		t.Logf("%d concurrent requests made %d lookup(s)", n, got)
		require.LessOrEqual(t, got, int64(2), "one expected; two if the machine was too slow to overlap them all")
		// Without a cache, the next request asks again.
		status, _ := me(t, br, plain+"/api/me")
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, before+got+1, proxy.lookups.Load())
	})

	t.Run("Echo adapter", func(t *testing.T) {
		m, err := client.New(remote, client.Options{Redirect: true, SignInBase: c.base, PublicOrigin: "https://app.example.com"})
		require.NoError(t, err)
		e := echo.New()
		e.GET("/me", func(ec echo.Context) error {
			u, _ := echoauth.UserFrom(ec)
			return ec.String(http.StatusOK, u.Email)
		}, echoauth.RequireUser(m))
		srv := httptest.NewServer(e)
		defer srv.Close()
		require.Equal(t, "remy@example.com", br.get(srv.URL+"/me").body)
		r := c.browser().get(srv.URL + "/me")
		require.Equal(t, http.StatusFound, r.StatusCode)
		require.Equal(t, c.publicURL("/signin?callbackUrl="+url.QueryEscape("https://app.example.com/me")), r.location())
	})

	// Sign out on latchkey; a copy of the cookie taken before is seen as
	// signed out by the backend once the cached answer has expired, not
	// before.
	watched, err := client.NewRemote(client.RemoteOptions{URL: proxy.url, CacheTTL: ttl})
	require.NoError(t, err)
	watch := backend(t, watched, client.Options{})
	status, _ = me(t, br, watch+"/api/me")
	require.Equal(t, http.StatusOK, status)
	filled := time.Now()
	stolen := br.cookie(sessionCookie)
	require.Equal(t, http.StatusFound, br.signOut(a).StatusCode)
	require.Empty(t, br.email(a))
	copyHolder := withCookie(c, sessionCookie, stolen)
	if time.Since(filled) < ttl-500*time.Millisecond {
		status, _ := me(t, copyHolder, watch+"/api/me")
		require.Equal(t, http.StatusOK, status, "still cached")
	}
	require.Eventually(t, func() bool {
		status, _ := me(t, copyHolder, watch+"/api/me")
		return status == http.StatusUnauthorized
	}, ttl+5*time.Second, 100*time.Millisecond, "the sign-out is seen after the cache's time to live")
	require.GreaterOrEqual(t, time.Since(filled), ttl-100*time.Millisecond, "not before it either: the cache held")

	// latchkey stops: a fresh signed-in session cannot be checked and is
	// refused with the configured status, never let through.
	fresh := c.browser()
	c.signInByEmail(fresh, a, "sol@example.com")
	a.stop(t)
	status, _ = me(t, fresh, app+"/api/me")
	require.Equal(t, http.StatusServiceUnavailable, status, "fails closed with 503 by default")
	require.Equal(t, http.StatusServiceUnavailable, fresh.get(app+"/page").StatusCode, "no redirect to a sign-in page that is down")
	require.Equal(t, "nobody", fresh.get(app+"/public").body)
	strict := backend(t, remote, client.Options{UnavailableStatus: http.StatusUnauthorized})
	status, _ = me(t, fresh, strict+"/api/me")
	require.Equal(t, http.StatusUnauthorized, status, "or 401 when configured")
}

// jwtClaims decrypts the session cookie latchkey set with the harness
// secret, for minting variants of it (an expired one).
func jwtClaims(t *testing.T, key *jwt.Key, token string) map[string]any {
	t.Helper()
	claims, err := key.Decode(token, time.Now())
	require.NoError(t, err)
	return claims
}

// jwtStrategyCase signs in on a jwt-strategy latchkey in the given cookie
// style and checks the backend in remote and local mode: the user is seen,
// a forged, expired or wrong-secret cookie is refused.
func jwtStrategyCase(t *testing.T, style, cookieName string, format jwt.Format) {
	c := startCluster(t, clusterOpts{instances: 1, extraConfig: "session:\n  strategy: jwt\ncookies:\n  style: " + style + "\n"})
	a := c.nodes[0]
	br := c.browser()
	c.signInByEmail(br, a, "jo@example.com")
	token := br.cookie(cookieName)
	require.NotEmpty(t, token, "latchkey set %s", cookieName)

	remote, err := client.NewRemote(client.RemoteOptions{URL: newSessionProxy(t, a).url})
	require.NoError(t, err)
	local, err := client.NewLocal(client.LocalOptions{Secrets: []string{"a-newer-secret-0123456789abcdef0123", authSecret}})
	require.NoError(t, err)
	wrongSecret, err := client.NewLocal(client.LocalOptions{Secrets: []string{"another-secret-0123456789abcdef0123"}})
	require.NoError(t, err)

	salt := ""
	if format == jwt.V5 {
		salt = cookieName
	}
	key, err := jwt.NewKey(authSecret, salt, format)
	require.NoError(t, err)
	claims := jwtClaims(t, key, token)
	expired, err := key.Encode(claims, time.Minute, time.Now().Add(-time.Hour))
	require.NoError(t, err)

	var remoteID string
	for name, resolver := range map[string]client.Resolver{"remote": remote, "local": local} {
		app := backend(t, resolver, client.Options{})
		status, u := me(t, br, app+"/api/me")
		require.Equal(t, http.StatusOK, status, name)
		require.Equal(t, "jo@example.com", u.Email, name)
		require.NotEmpty(t, u.ID, name)
		require.WithinDuration(t, time.Unix(int64(claims["exp"].(float64)), 0), u.Expires, time.Second, name)
		if remoteID == "" {
			remoteID = u.ID
		}
		require.Equal(t, remoteID, u.ID, "%s: the same user id in both modes", name)

		for what, value := range map[string]string{
			"forged":  token[:len(token)-8] + "AAAAAAAA",
			"expired": expired,
			"junk":    "not-a-jwe",
		} {
			status, _ := me(t, withCookie(c, cookieName, value), app+"/api/me")
			require.Equal(t, http.StatusUnauthorized, status, "%s: %s cookie", name, what)
		}
	}
	app := backend(t, wrongSecret, client.Options{})
	status, _ := me(t, br, app+"/api/me")
	require.Equal(t, http.StatusUnauthorized, status, "a token under another secret is nobody")

	// Local mode needs no latchkey at all.
	a.stop(t)
	status, u := me(t, br, backend(t, local, client.Options{})+"/api/me")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "jo@example.com", u.Email)
}

func TestClientJWTStrategyNextAuthFormat(t *testing.T) {
	jwtStrategyCase(t, "next-auth", "next-auth.session-token", jwt.V4)
}

func TestClientJWTStrategyAuthjsFormat(t *testing.T) {
	jwtStrategyCase(t, "authjs", "authjs.session-token", jwt.V5)
}
