package app_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	o.config = func(c *config.Config) {
		c.OpenID.Enabled = true
		c.OpenID.Clients = opClients()
		if mutate != nil {
			mutate(c)
		}
	}
	return startEnv(t, o)
}

// rp is one relying party of the provider.
type rp struct {
	e        *env
	oauth    oauth2.Config
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
}

// relyingParty discovers the provider and builds the client id's RP.
func (e *env) relyingParty(clientID, secret string, scopes ...string) *rp {
	e.t.Helper()
	ctx := oidc.ClientContext(context.Background(), e.srv.Client())
	p, err := oidc.NewProvider(ctx, e.base)
	require.NoError(e.t, err)
	if len(scopes) == 0 {
		scopes = []string{oidc.ScopeOpenID, "profile", "email"}
	}
	return &rp{
		e: e, provider: p,
		oauth:    oauth2.Config{ClientID: clientID, ClientSecret: secret, Endpoint: p.Endpoint(), RedirectURL: rpRedirect, Scopes: scopes},
		verifier: p.VerifierContext(ctx, &oidc.Config{ClientID: clientID, Now: e.clock.Now}),
	}
}

func (r *rp) ctx() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, r.e.srv.Client())
}

// authorization is one authorize request's secrets.
type authorization struct{ state, nonce, verifier string }

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// authorize sends browser c to the authorization endpoint with PKCE,
// state and nonce (and extra parameters), follows latchkey's redirects,
// and returns the last answer: the redirect to the client (code or
// error), or a latchkey page the browser stopped at.
func (r *rp) authorize(c *http.Client, extra ...string) (resp, authorization) {
	r.e.t.Helper()
	a := authorization{state: randomHex(), nonce: randomHex(), verifier: oauth2.GenerateVerifier()}
	opts := []oauth2.AuthCodeOption{oidc.Nonce(a.nonce), oauth2.S256ChallengeOption(a.verifier)}
	for i := 0; i+1 < len(extra); i += 2 {
		opts = append(opts, oauth2.SetAuthURLParam(extra[i], extra[i+1]))
	}
	return r.e.follow(c, r.oauth.AuthCodeURL(a.state, opts...)), a
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

// codeFrom reads the code of a redirect to the client, checking state.
func (r *rp) codeFrom(res resp, a authorization) string {
	r.e.t.Helper()
	require.Equal(r.e.t, http.StatusFound, res.StatusCode, res.body)
	u, err := url.Parse(res.location())
	require.NoError(r.e.t, err)
	require.Equal(r.e.t, rpRedirect, u.Scheme+"://"+u.Host+u.Path, "redirected to %s", res.location())
	require.Equal(r.e.t, a.state, u.Query().Get("state"))
	require.Empty(r.e.t, u.Query().Get("error"), res.location())
	code := u.Query().Get("code")
	require.NotEmpty(r.e.t, code)
	return code
}

// errorFrom reads the error of a redirect to the client, checking state.
func (r *rp) errorFrom(res resp, a authorization) string {
	r.e.t.Helper()
	require.Equal(r.e.t, http.StatusFound, res.StatusCode, res.body)
	u, err := url.Parse(res.location())
	require.NoError(r.e.t, err)
	require.True(r.e.t, strings.HasPrefix(res.location(), rpRedirect), res.location())
	require.Equal(r.e.t, a.state, u.Query().Get("state"))
	return u.Query().Get("error")
}

// exchange trades a code for tokens and verifies the ID token.
func (r *rp) exchange(code string, a authorization) (*oauth2.Token, *oidc.IDToken, error) {
	tok, err := r.oauth.Exchange(r.ctx(), code, oauth2.VerifierOption(a.verifier))
	if err != nil {
		return nil, nil, err
	}
	raw, _ := tok.Extra("id_token").(string)
	id, err := r.verifier.Verify(r.ctx(), raw)
	if err != nil {
		return tok, nil, err
	}
	if id.Nonce != a.nonce {
		return tok, id, errNonce
	}
	return tok, id, nil
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

// consent answers the consent page the browser stopped at.
func (e *env) consent(c *http.Client, page resp, decision string) resp {
	e.t.Helper()
	require.Equal(e.t, http.StatusOK, page.StatusCode, page.body)
	require.Contains(e.t, page.body, `name="decision"`)
	id := regexpFind(e.t, page.body, `name="id" value="([0-9a-f]+)"`)
	res := e.post(c, "/oidc/consent", url.Values{"csrfToken": {e.csrf(c)}, "id": {id}, "decision": {decision}})
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
