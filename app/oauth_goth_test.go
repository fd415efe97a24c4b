package app_test

// A goth catalogue provider (github) through latchkey's whole HTTP flow:
// POST /signin/github → GitHub's authorize URL → GET /callback/github →
// code exchange with PKCE, profile and e-mail from a local TLS stand-in for
// github.com and api.github.com → user, account and session. The browser
// never talks to GitHub; the test plays GitHub's redirect back itself.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net"
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
	"github.com/latchkey-auth/latchkey/models"
)

const (
	ghClientID     = "gh-client-id"
	ghClientSecret = "gh-client-secret"
	ghUserID       = 583231 // GitHub's ids are JSON numbers
)

// ghGrant is what GitHub remembers about one authorization code.
type ghGrant struct {
	challenge, redirectURI string
}

// fakeGitHub stands in for github.com (token endpoint) and api.github.com
// (/user, /user/emails) on one local TLS server.
type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server

	mu         sync.Mutex
	grants     map[string]ghGrant // code → grant; single use
	tokens     map[string]bool    // issued access tokens
	next       int
	userStatus int // non-zero: /user answers with this status
	tokenCalls int
	userCalls  int
	emailCalls int
	refusals   []string // why the token endpoint refused, for failure messages
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{t: t, grants: map[string]ghGrant{}, tokens: map[string]bool{}}
	g.srv = httptest.NewTLSServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

// client is the http.Client latchkey gets: every connection, whatever the
// host (github.com, api.github.com), goes to the local server, whose
// certificate it trusts. Requests keep their real Host.
func (g *fakeGitHub) client() *http.Client {
	tr := g.srv.Client().Transport.(*http.Transport).Clone()
	addr := g.srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig.ServerName = "example.com" // the name in httptest's certificate
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// authorize is what github.com/login/oauth/authorize does once the user
// consents: remember the PKCE challenge and redirect URI, hand out a code.
func (g *fakeGitHub) authorize(challenge, redirectURI string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.next++
	code := "ghcode-" + strconv.Itoa(g.next)
	g.grants[code] = ghGrant{challenge: challenge, redirectURI: redirectURI}
	return code
}

func (g *fakeGitHub) stats() (token, user, email int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tokenCalls, g.userCalls, g.emailCalls
}

// refused lists why the token endpoint said no, for failure messages.
func (g *fakeGitHub) refused() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.refusals...)
}

func (g *fakeGitHub) setUserStatus(code int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.userStatus = code
}

func ghJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (g *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Host == "github.com" && r.URL.Path == "/login/oauth/access_token" && r.Method == http.MethodPost:
		g.token(w, r)
	case r.Host == "api.github.com" && r.URL.Path == "/user" && r.Method == http.MethodGet:
		g.user(w, r)
	case r.Host == "api.github.com" && r.URL.Path == "/user/emails" && r.Method == http.MethodGet:
		g.emails(w, r)
	default:
		g.t.Errorf("fake GitHub: unexpected request %s %s%s", r.Method, r.Host, r.URL)
		http.NotFound(w, r)
	}
}

// token is GitHub's token endpoint. Like GitHub it answers a bad code with
// 200 and an "error" field.
func (g *fakeGitHub) token(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tokenCalls++
	refuse := func(code, why string) {
		g.refusals = append(g.refusals, why)
		ghJSON(w, map[string]string{"error": code, "error_description": why})
	}
	if err := r.ParseForm(); err != nil {
		refuse("invalid_request", err.Error())
		return
	}
	f := r.PostForm
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	if id != ghClientID || secret != ghClientSecret {
		refuse("incorrect_client_credentials", "client "+id)
		return
	}
	if f.Get("grant_type") != "authorization_code" {
		refuse("unsupported_grant_type", f.Get("grant_type"))
		return
	}
	grant, ok := g.grants[f.Get("code")]
	if !ok {
		refuse("bad_verification_code", "unknown or used code "+f.Get("code"))
		return
	}
	delete(g.grants, f.Get("code")) // single use, as on GitHub
	if f.Get("redirect_uri") != grant.redirectURI {
		refuse("redirect_uri_mismatch", f.Get("redirect_uri"))
		return
	}
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	if f.Get("code_verifier") == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != grant.challenge {
		refuse("invalid_grant", "code_verifier "+strconv.Quote(f.Get("code_verifier"))+" does not match the code_challenge")
		return
	}
	tok := "gho_" + strconv.Itoa(len(g.tokens)+1) + "_fake"
	g.tokens[tok] = true
	ghJSON(w, map[string]string{"access_token": tok, "token_type": "bearer", "scope": "read:user,user:email"})
}

func (g *fakeGitHub) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && g.tokens[tok]
}

func (g *fakeGitHub) user(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.userCalls++
	if !g.authorized(r) {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	if g.userStatus != 0 {
		http.Error(w, `{"message":"Server Error"}`, g.userStatus)
		return
	}
	// A private e-mail: null here, so goth reads /user/emails.
	ghJSON(w, map[string]any{
		"id": ghUserID, "login": "monalisa", "name": "Mona Lisa Octocat", "email": nil,
		"avatar_url": "https://avatars.githubusercontent.com/u/583231?v=4",
	})
}

func (g *fakeGitHub) emails(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.emailCalls++
	if !g.authorized(r) {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	ghJSON(w, []map[string]any{
		{"email": "unverified@example.com", "primary": false, "verified": false},
		{"email": "Mona@Example.COM", "primary": true, "verified": true},
		{"email": "mona@users.noreply.github.com", "primary": false, "verified": true},
	})
}

// startGitHub boots latchkey on its own URL with the github catalogue
// provider, talking to gh through app.Options.HTTPClient.
func startGitHub(t *testing.T, gh *fakeGitHub, strategy string) *env {
	t.Helper()
	return startEnv(t, envOpts{ownURL: true, strategy: strategy, idpHTTP: gh.client(), config: func(c *config.Config) {
		c.Callbacks.ExposeUserID = true
		c.Providers = []config.Provider{{ID: "github", Type: config.TypeOAuth, ClientID: ghClientID, ClientSecret: ghClientSecret}}
	}})
}

// ghAuthorize POSTs /signin/github and checks the redirect to GitHub's
// authorization endpoint; it returns that URL's query.
func (e *env) ghAuthorize(c *http.Client, callbackURL string) url.Values {
	e.t.Helper()
	res := e.signIn(c, "github", callbackURL)
	require.Equal(e.t, http.StatusFound, res.StatusCode, "body: %s", res.body)
	loc, err := url.Parse(res.location())
	require.NoError(e.t, err)
	require.Equal(e.t, "https", loc.Scheme, res.location())
	require.Equal(e.t, "github.com", loc.Host, res.location())
	require.Equal(e.t, "/login/oauth/authorize", loc.Path, res.location())
	q := loc.Query()
	require.Equal(e.t, ghClientID, q.Get("client_id"))
	require.Equal(e.t, e.base+"/callback/github", q.Get("redirect_uri"))
	require.Equal(e.t, "code", q.Get("response_type"))
	require.Regexp(e.t, base64URL43, q.Get("state"))
	require.Equal(e.t, "S256", q.Get("code_challenge_method"))
	require.Regexp(e.t, `^[A-Za-z0-9_-]{43}$`, q.Get("code_challenge"))
	require.Equal(e.t, "read:user user:email", q.Get("scope"))
	require.Empty(e.t, q.Get("client_secret"))
	return q
}

// ghCallback is GitHub's redirect back to latchkey, in the same browser.
func (e *env) ghCallback(c *http.Client, code, state string) resp {
	e.t.Helper()
	return e.get(c, e.base+"/callback/github?"+url.Values{"code": {code}, "state": {state}}.Encode())
}

func TestGitHubCatalogueSignIn(t *testing.T) {
	for _, strategy := range strategies() {
		t.Run(strategy, func(t *testing.T) {
			gh := newFakeGitHub(t)
			e := startGitHub(t, gh, strategy)

			b := e.browser()
			q := e.ghAuthorize(b, "/dashboard")
			code := gh.authorize(q.Get("code_challenge"), q.Get("redirect_uri"))
			res := e.ghCallback(b, code, q.Get("state"))
			require.Equal(t, http.StatusFound, res.StatusCode, "body: %s; GitHub refused: %v", res.body, gh.refused())
			require.Equal(t, e.origin+"/dashboard", res.location(), "GitHub refused: %v", gh.refused())
			tokens, users, emails := gh.stats()
			require.Equal(t, [3]int{1, 1, 1}, [3]int{tokens, users, emails}, "token, /user and /user/emails calls")

			s := e.session(b)
			u, _ := s["user"].(map[string]any)
			require.Equal(t, "Mona Lisa Octocat", u["name"])
			require.Equal(t, "mona@example.com", u["email"]) // the primary verified one, lower-cased
			require.Equal(t, "https://avatars.githubusercontent.com/u/583231?v=4", u["image"])
			userID, _ := u["id"].(string)
			require.NotEmpty(t, userID)

			acc := e.onlyAccount()
			require.Equal(t, "github", acc.Provider)
			require.Equal(t, "oauth", acc.Type)
			require.Equal(t, strconv.Itoa(ghUserID), acc.ProviderAccountID)
			require.Equal(t, userID, acc.UserID)
			// store_tokens is off: none of the provider's tokens is kept
			// (issue #35; provider_tokens_test.go covers it on).
			require.Nil(t, acc.AccessToken)
			require.Nil(t, acc.TokenType)
			require.Nil(t, acc.Scope)
			require.Nil(t, acc.RefreshToken)
			require.Nil(t, acc.IDToken)

			user, err := e.app.Store().UserByID(t.Context(), userID)
			require.NoError(t, err)
			require.NotNil(t, user.Email)
			require.Equal(t, "mona@example.com", *user.Email)

			wantSessions := int64(0)
			if strategy == config.StrategyDatabase {
				wantSessions = 1
			}
			require.Equal(t, models.Counts{Users: 1, Accounts: 1, Sessions: wantSessions}, e.counts())

			// Replaying GitHub's redirect in the same browser fails before
			// GitHub is asked again: the callback spent the check cookie.
			e.requireError(e.ghCallback(b, code, q.Get("state")), "OAuthCallback")
			tokens, _, _ = gh.stats()
			require.Equal(t, 1, tokens)

			// A second sign-in with the same GitHub id, in another browser,
			// is the same user and the same account.
			b2 := e.browser()
			q2 := e.ghAuthorize(b2, "/again")
			require.NotEqual(t, q.Get("state"), q2.Get("state"))
			require.NotEqual(t, q.Get("code_challenge"), q2.Get("code_challenge"))
			res = e.ghCallback(b2, gh.authorize(q2.Get("code_challenge"), q2.Get("redirect_uri")), q2.Get("state"))
			require.Equal(t, http.StatusFound, res.StatusCode, "body: %s; GitHub refused: %v", res.body, gh.refused())
			require.Equal(t, e.origin+"/again", res.location(), "GitHub refused: %v", gh.refused())
			_, id2 := e.sessionUser(b2)
			require.Equal(t, userID, id2)
			require.Equal(t, models.Counts{Users: 1, Accounts: 1, Sessions: 2 * wantSessions}, e.counts())
			_, id1 := e.sessionUser(b)
			require.Equal(t, userID, id1, "the first browser is still signed in")
		})
	}
}

func TestGitHubCatalogueSignInFailures(t *testing.T) {
	nothing := models.Counts{}

	t.Run("wrong state", func(t *testing.T) {
		gh := newFakeGitHub(t)
		e := startGitHub(t, gh, "")
		b := e.browser()
		// Another browser's state: a real state, but not for this browser's
		// CSRF and check cookies.
		other := e.ghAuthorize(e.browser(), "/dashboard").Get("state")
		for _, state := range []string{other, strings.Repeat("A", 43), ""} {
			q := e.ghAuthorize(b, "/dashboard") // a fresh attempt each time: a callback spends one
			require.NotEqual(t, q.Get("state"), other)
			code := gh.authorize(q.Get("code_challenge"), q.Get("redirect_uri"))
			e.requireError(e.ghCallback(b, code, state), "OAuthCallback")
		}
		tokens, users, _ := gh.stats()
		require.Zero(t, tokens, "the code must not be redeemed before the state is checked")
		require.Zero(t, users)
		require.Equal(t, nothing, e.counts())
		require.Equal(t, map[string]any{}, e.session(b))
	})

	t.Run("token endpoint refuses the code", func(t *testing.T) {
		gh := newFakeGitHub(t)
		e := startGitHub(t, gh, "")
		b := e.browser()
		q := e.ghAuthorize(b, "/dashboard")
		gh.authorize(q.Get("code_challenge"), q.Get("redirect_uri"))
		e.requireError(e.ghCallback(b, "ghcode-never-issued", q.Get("state")), "OAuthCallback")
		tokens, users, _ := gh.stats()
		require.NotZero(t, tokens)
		require.Zero(t, users, "no profile without a token")
		require.Equal(t, nothing, e.counts())
		require.Equal(t, map[string]any{}, e.session(b))
	})

	t.Run("verifier of another sign-in", func(t *testing.T) {
		// The code was issued for another browser's code_challenge: the
		// verifier latchkey holds for this browser does not match it.
		gh := newFakeGitHub(t)
		e := startGitHub(t, gh, "")
		b := e.browser()
		q := e.ghAuthorize(b, "/dashboard")
		other := e.ghAuthorize(e.browser(), "/dashboard")
		code := gh.authorize(other.Get("code_challenge"), q.Get("redirect_uri"))
		e.requireError(e.ghCallback(b, code, q.Get("state")), "OAuthCallback")
		_, users, _ := gh.stats()
		require.Zero(t, users)
		require.Equal(t, nothing, e.counts())
	})

	t.Run("user endpoint fails", func(t *testing.T) {
		gh := newFakeGitHub(t)
		gh.setUserStatus(http.StatusInternalServerError)
		e := startGitHub(t, gh, "")
		b := e.browser()
		q := e.ghAuthorize(b, "/dashboard")
		code := gh.authorize(q.Get("code_challenge"), q.Get("redirect_uri"))
		e.requireError(e.ghCallback(b, code, q.Get("state")), "OAuthCallback")
		tokens, users, emails := gh.stats()
		require.Equal(t, [3]int{1, 1, 0}, [3]int{tokens, users, emails}, "token, /user and /user/emails calls")
		require.Equal(t, nothing, e.counts())
		require.Equal(t, map[string]any{}, e.session(b))
	})
}
