package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// The OpenID Provider's tests drive latchkey as a relying party would:
// go-oidc (discovery, keys, ID token verification) and x/oauth2 (code
// exchange with PKCE, refresh), with a browser (cookie jar) that signs in
// through latchkey's own pages.

const (
	rpSecret   = "rp-secret-0123456789abcdef0123456789abcdef"
	rpRedirect = "http://127.0.0.1:9/callback" // never contacted: the browser stops there
	rpLogout   = "http://127.0.0.1:9/signed-out"
)

// opClients are the clients of every OP test: "app" confidential, "spa"
// public (PKCE only), "tool" first-party (no consent page).
func opClients() []config.OpenIDClient {
	return []config.OpenIDClient{
		{ID: "app", Name: "Example App", Secret: rpSecret, RedirectURIs: []string{rpRedirect}, PostLogoutRedirectURIs: []string{rpLogout}},
		{ID: "spa", Name: "Example SPA", Public: true, RedirectURIs: []string{rpRedirect}},
		{ID: "tool", Name: "Internal Tool", Secret: rpSecret, FirstParty: true, RedirectURIs: []string{rpRedirect}, PostLogoutRedirectURIs: []string{rpLogout}},
	}
}

// startOP is the provider's setup: e-mail sign-in through a real SMTP
// catcher, the app on its own URL, a settable clock, the provider on with
// opClients; mutate adjusts the config.
func startOP(t testing.TB, b backend, mutate func(*config.Config)) *env {
	t.Helper()
	o := b.opts(envOpts{ownURL: true, smtp: &smtptest.Options{}, clock: &testClock{now: time.Now().UTC().Truncate(time.Second)}, logs: true})
	o.config = opConfig(mutate)
	return startEnv(t, o)
}

// opConfig turns the provider on with opClients, then applies mutate.
func opConfig(mutate func(*config.Config)) func(*config.Config) {
	return func(c *config.Config) {
		c.OpenID.Enabled = true
		c.OpenID.Clients = opClients()
		if mutate != nil {
			mutate(c)
		}
	}
}

// routedTo is a copy of c (same jar) whose requests for host (host:port)
// go to the server at target (a URL) instead, the Host header unchanged:
// a load balancer in front of several instances.
func routedTo(c *http.Client, host, target string) *http.Client {
	u, err := url.Parse(target)
	if err != nil {
		panic(err)
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cp := *c
	cp.Transport = hostRoute{from: host, to: u.Host, next: next}
	return &cp
}

type hostRoute struct {
	from, to string
	next     http.RoundTripper
}

func (h hostRoute) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == h.from {
		req = req.Clone(req.Context())
		req.URL.Host = h.to
	}
	return h.next.RoundTrip(req)
}

// rp is one relying party of the provider.
type rp struct {
	e        *env
	http     *http.Client // its calls to the provider (discovery, token, userinfo...)
	oauth    oauth2.Config
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
}

// relyingParty discovers the provider and builds the client id's RP: a
// confidential client authenticates with client_secret_basic, a public
// one (no secret) sends its client_id in the body.
func (e *env) relyingParty(clientID, secret string, scopes ...string) *rp {
	e.t.Helper()
	return e.relyingPartyVia(e.srv.Client(), clientID, secret, scopes...)
}

// relyingPartyVia is relyingParty calling the provider through hc.
func (e *env) relyingPartyVia(hc *http.Client, clientID, secret string, scopes ...string) *rp {
	e.t.Helper()
	ctx := oidc.ClientContext(context.Background(), hc)
	p, err := oidc.NewProvider(ctx, e.base)
	require.NoError(e.t, err)
	if len(scopes) == 0 {
		scopes = []string{oidc.ScopeOpenID, "profile", "email"}
	}
	ep := p.Endpoint()
	ep.AuthStyle = oauth2.AuthStyleInHeader
	if secret == "" {
		ep.AuthStyle = oauth2.AuthStyleInParams
	}
	return &rp{
		e: e, http: hc, provider: p,
		oauth:    oauth2.Config{ClientID: clientID, ClientSecret: secret, Endpoint: ep, RedirectURL: rpRedirect, Scopes: scopes},
		verifier: p.VerifierContext(ctx, &oidc.Config{ClientID: clientID, Now: e.clock.Now}),
	}
}

func (r *rp) ctx() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, r.http)
}

// authorization is one authorize request's secrets.
type authorization struct{ state, nonce, verifier string }

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// authorize sends browser c to the authorization endpoint with PKCE,
// state and nonce (and extra parameters, see authorizeURL), follows
// latchkey's redirects, and returns the last answer: the redirect to the
// client (code or error), or a latchkey page the browser stopped at.
func (r *rp) authorize(c *http.Client, extra ...string) (resp, authorization) {
	r.e.t.Helper()
	target, a := r.authorizeURL(extra...)
	return r.e.follow(c, target), a
}

// authorizeURL is an authorization request with PKCE (S256), state and
// nonce; extra are name, value pairs that set a parameter, or delete it
// with the value "".
func (r *rp) authorizeURL(extra ...string) (string, authorization) {
	r.e.t.Helper()
	a := authorization{state: randomHex(), nonce: randomHex(), verifier: oauth2.GenerateVerifier()}
	u, err := url.Parse(r.oauth.AuthCodeURL(a.state, oidc.Nonce(a.nonce), oauth2.S256ChallengeOption(a.verifier)))
	require.NoError(r.e.t, err)
	q := u.Query()
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			q.Del(extra[i])
		} else {
			q.Set(extra[i], extra[i+1])
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), a
}

// follow GETs target and follows redirects within latchkey; it stops at
// the first one leaving it, or at a page.
func (e *env) follow(c *http.Client, target string) resp {
	e.t.Helper()
	res := e.get(c, target)
	for i := 0; i < 10 && res.StatusCode == http.StatusFound && strings.HasPrefix(res.location(), e.base); i++ {
		res = e.get(c, res.location())
	}
	return res
}

// codeFrom reads the code of a redirect to the client, checking state
// and iss.
func (r *rp) codeFrom(res resp, a authorization) string {
	r.e.t.Helper()
	require.Equal(r.e.t, http.StatusFound, res.StatusCode, res.body)
	u, err := url.Parse(res.location())
	require.NoError(r.e.t, err)
	require.Equal(r.e.t, rpRedirect, u.Scheme+"://"+u.Host+u.Path, "redirected to %s", res.location())
	require.Equal(r.e.t, a.state, u.Query().Get("state"))
	require.Empty(r.e.t, u.Query().Get("error"), res.location())
	require.Equal(r.e.t, r.e.base, u.Query().Get("iss"), "the issuer (RFC 9207)")
	code := u.Query().Get("code")
	require.NotEmpty(r.e.t, code)
	return code
}

// errorFrom reads the error of a redirect to the client, checking state
// and iss.
func (r *rp) errorFrom(res resp, a authorization) string {
	r.e.t.Helper()
	require.Equal(r.e.t, http.StatusFound, res.StatusCode, res.body)
	u, err := url.Parse(res.location())
	require.NoError(r.e.t, err)
	require.True(r.e.t, strings.HasPrefix(res.location(), rpRedirect), res.location())
	require.Equal(r.e.t, a.state, u.Query().Get("state"))
	require.Equal(r.e.t, r.e.base, u.Query().Get("iss"), "the issuer (RFC 9207)")
	return u.Query().Get("error")
}

// exchange trades a code for tokens and verifies the ID token.
func (r *rp) exchange(code string, a authorization, opts ...oauth2.AuthCodeOption) (*oauth2.Token, *oidc.IDToken, error) {
	tok, err := r.oauth.Exchange(r.ctx(), code, append([]oauth2.AuthCodeOption{oauth2.VerifierOption(a.verifier)}, opts...)...)
	if err != nil {
		return nil, nil, err
	}
	id, err := r.verify(tok)
	if err != nil {
		return tok, nil, err
	}
	if id.Nonce != a.nonce {
		return tok, id, errNonce
	}
	return tok, id, nil
}

// verify verifies the token response's ID token.
func (r *rp) verify(tok *oauth2.Token) (*oidc.IDToken, error) {
	raw, _ := tok.Extra("id_token").(string)
	return r.verifier.Verify(r.ctx(), raw)
}

type nonceError struct{}

func (nonceError) Error() string { return "nonce does not match" }

var errNonce = nonceError{}

// signedIn is a browser signed in to latchkey as addr (an e-mail link).
func (e *env) signedIn(addr string) *http.Client {
	e.t.Helper()
	c := e.browser()
	e.signInByLink(c, addr)
	return c
}

// consent answers the consent page the browser stopped at, posting the
// page's hidden fields.
func (e *env) consent(c *http.Client, page resp, decision string) resp {
	e.t.Helper()
	require.Equal(e.t, http.StatusOK, page.StatusCode, page.body)
	require.Contains(e.t, page.body, `name="decision"`)
	regexpFind(e.t, page.body, `name="id" value="([0-9a-f]+)"`)
	form := url.Values{}
	for _, f := range mailHiddenRE.FindAllStringSubmatch(page.body, -1) {
		form.Set(f[1], html.UnescapeString(f[2]))
	}
	form.Set("csrfToken", e.csrf(c))
	form.Set("decision", decision)
	res := e.post(c, "/oidc/consent", form)
	for i := 0; i < 10 && res.StatusCode == http.StatusFound && strings.HasPrefix(res.location(), e.base); i++ {
		res = e.get(c, res.location())
	}
	return res
}

// regexpFind is the first group of pattern in s.
func regexpFind(t testing.TB, s, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	require.Len(t, m, 2, "no %s in %s", pattern, s)
	return m[1]
}

// signInFlow is a whole authorization of browser c: the consent page
// allowed when it shows, the code exchanged; it returns the tokens and
// the verified ID token (nonce checked).
func (r *rp) signInFlow(c *http.Client, extra ...string) (*oauth2.Token, *oidc.IDToken) {
	r.e.t.Helper()
	res, a := r.authorize(c, extra...)
	if res.StatusCode == http.StatusOK {
		res = r.e.consent(c, res, "allow")
	}
	tok, id, err := r.exchange(r.codeFrom(res, a), a)
	require.NoError(r.e.t, err)
	return tok, id
}

// signInFrom: browser c stopped at latchkey's sign-in page (page), sent
// there by an authorization request; it signs in as addr by an e-mail
// link, which brings it back to the request, and returns the answer it
// ends at (the redirect to the client, or the consent page).
func (e *env) signInFrom(c *http.Client, page resp, addr string) resp {
	e.t.Helper()
	require.Equal(e.t, http.StatusOK, page.StatusCode, page.body)
	u := page.Request.URL
	require.Equal(e.t, e.path+"/signin", u.Path, "not at the sign-in page: %s", u)
	back := u.Query().Get("callbackUrl")
	require.True(e.t, strings.HasPrefix(back, e.base+"/oidc/continue?"), "sign-in page back to %q", back)
	return e.follow(c, e.emailLink(c, addr, back))
}

// oauthError is the OAuth error code and HTTP status of a failed token
// request (x/oauth2's *RetrieveError).
func oauthError(t testing.TB, err error) (string, int) {
	t.Helper()
	var re *oauth2.RetrieveError
	require.ErrorAs(t, err, &re)
	return re.ErrorCode, re.Response.StatusCode
}

// requireGrantRefused asserts a token request refused with invalid_grant.
func requireGrantRefused(t testing.TB, err error) {
	t.Helper()
	code, status := oauthError(t, err)
	require.Equal(t, "invalid_grant", code)
	require.Equal(t, http.StatusBadRequest, status)
}

// refresh uses a refresh token (client authentication as the RP's).
func (r *rp) refresh(refreshToken string) (*oauth2.Token, error) {
	return r.oauth.TokenSource(r.ctx(), &oauth2.Token{RefreshToken: refreshToken}).Token()
}

// discovered is a field of the discovery document.
func (r *rp) discovered(name string) any {
	r.e.t.Helper()
	var m map[string]any
	require.NoError(r.e.t, r.provider.Claims(&m))
	return m[name]
}

// endpoint is an endpoint's URL from the discovery document.
func (r *rp) endpoint(name string) string {
	r.e.t.Helper()
	v, _ := r.discovered(name).(string)
	require.NotEmpty(r.e.t, v, "no %s in the discovery document", name)
	return v
}

// call sends a request to the provider as the RP does (its HTTP client,
// no cookies); headers are name, value pairs.
func (r *rp) call(method, target string, form url.Values, headers ...string) resp {
	r.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	require.NoError(r.e.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	c := *r.http
	c.CheckRedirect = stopAtRedirect
	return r.e.do(&c, req)
}

// userinfo is GET userinfo with the access token.
func (r *rp) userinfo(accessToken string) resp {
	r.e.t.Helper()
	return r.call(http.MethodGet, r.endpoint("userinfo_endpoint"), nil, "Authorization", "Bearer "+accessToken)
}

// basicAuth is the Authorization header of client_secret_basic.
func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// introspect is RFC 7662 introspection of token by the RP (client_secret_basic).
func (r *rp) introspect(token string) resp {
	r.e.t.Helper()
	return r.call(http.MethodPost, r.endpoint("introspection_endpoint"), url.Values{"token": {token}},
		"Authorization", basicAuth(r.oauth.ClientID, r.oauth.ClientSecret))
}

// revoke is RFC 7009 revocation of token by the RP (client_secret_basic).
func (r *rp) revoke(token, hint string) resp {
	r.e.t.Helper()
	form := url.Values{"token": {token}}
	if hint != "" {
		form.Set("token_type_hint", hint)
	}
	return r.call(http.MethodPost, r.endpoint("revocation_endpoint"), form,
		"Authorization", basicAuth(r.oauth.ClientID, r.oauth.ClientSecret))
}

// oidcTokens counts the provider's tokens: all, and those not revoked.
func (e *env) oidcTokens() (all, live int64) {
	e.t.Helper()
	db := e.app.Store().DB().WithContext(context.Background())
	require.NoError(e.t, db.Model(&openidstore.Token{}).Count(&all).Error)
	require.NoError(e.t, db.Model(&openidstore.Token{}).Where("revoked_at IS NULL").Count(&live).Error)
	return all, live
}

// authRequests counts the provider's stored authorization requests.
func (e *env) authRequests() int64 {
	e.t.Helper()
	var n int64
	require.NoError(e.t, e.app.Store().DB().WithContext(context.Background()).Model(&openidstore.AuthRequest{}).Count(&n).Error)
	return n
}

// jwtHeader is the alg and kid of a compact JWS.
func jwtHeader(t testing.TB, raw string) (alg, kid string) {
	t.Helper()
	head, _, ok := strings.Cut(raw, ".")
	require.True(t, ok, "not a JWS: %q", raw)
	b, err := base64.RawURLEncoding.DecodeString(head)
	require.NoError(t, err)
	var h struct{ Alg, Kid string }
	require.NoError(t, json.Unmarshal(b, &h))
	return h.Alg, h.Kid
}

// rawIDToken is the token response's id_token.
func rawIDToken(t testing.TB, tok *oauth2.Token) string {
	t.Helper()
	raw, _ := tok.Extra("id_token").(string)
	require.NotEmpty(t, raw, "no id_token")
	return raw
}

// authTime is an ID token's auth_time.
func authTime(t testing.TB, id *oidc.IDToken) int64 {
	t.Helper()
	var c struct {
		AuthTime int64 `json:"auth_time"`
	}
	require.NoError(t, id.Claims(&c))
	return c.AuthTime
}
