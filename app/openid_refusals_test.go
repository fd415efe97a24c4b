package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// The OpenID Provider's refusals, each from the side of who notices it (the
// browser, the relying party) and each checking that nothing happened
// besides: no token issued, a code not used up by a refusal that came
// before its exchange, a family revoked when a reuse says a secret leaked.
// Every backend.

const ada = "ada@example.com"

// offline are the scopes of an RP that wants refresh tokens.
var offline = []string{oidc.ScopeOpenID, "profile", "email", oidc.ScopeOfflineAccess}

// eachOP runs f on a provider of every backend, the backends side by
// side (each app is on its own database, clock and mail catcher).
func eachOP(t *testing.T, mutate func(*config.Config), f func(t *testing.T, e *env)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, startOP(t, b, mutate))
		})
	}
}

// TestOpenIDRefusesUnregisteredRedirectURI: /authorize with a redirect_uri
// the client did not register — another host, a longer path, an added
// query, or an unknown client — answers a 400 page and never redirects
// there (an open redirector would hand the code or the error to anyone);
// no request is stored.
func TestOpenIDRefusesUnregisteredRedirectURI(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("app", rpSecret)
		for _, extra := range [][]string{
			{"redirect_uri", "https://evil.example/callback"},
			{"redirect_uri", rpRedirect + "/more"},
			{"redirect_uri", rpRedirect + "?next=https://evil.example/"},
			{"redirect_uri", strings.ToUpper(rpRedirect)},
			{"client_id", "nobody"},
		} {
			res, _ := r.authorize(c, extra...)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "%v: %s", extra, res.body)
			require.Empty(t, res.location(), extra)
		}
		require.Zero(t, e.authRequests())
		all, _ := e.oidcTokens()
		require.Zero(t, all)
	})
}

// TestOpenIDRefusesOtherRedirectURIAtToken: a code exchanged with a
// redirect_uri other than the authorization's (or none) is invalid_grant;
// the refusal comes before the exchange, so the code still works with the
// right one.
func TestOpenIDRefusesOtherRedirectURIAtToken(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret)
		res, a := r.authorize(c)
		code := r.codeFrom(res, a)
		for _, uri := range []string{"http://127.0.0.1:9/other", rpRedirect + "/", ""} {
			_, _, err := r.exchange(code, a, oauth2.SetAuthURLParam("redirect_uri", uri))
			requireGrantRefused(t, err)
		}
		all, _ := e.oidcTokens()
		require.Zero(t, all)
		_, _, err := r.exchange(code, a)
		require.NoError(t, err)
	})
}

// TestOpenIDCodeReuse: a code exchanged a second time is invalid_grant,
// and what the first exchange issued — the access token and the refresh
// token — is revoked: userinfo answers 401, the refresh is refused.
func TestOpenIDCodeReuse(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret, offline...)
		res, a := r.authorize(c)
		code := r.codeFrom(res, a)
		tok, _, err := r.exchange(code, a)
		require.NoError(t, err)
		require.NotEmpty(t, tok.RefreshToken)
		require.Equal(t, http.StatusOK, r.userinfo(tok.AccessToken).StatusCode)

		// The used code without tool's secret or verifier (another client,
		// none) is refused and ends nothing.
		_, _, err = e.relyingParty("app", rpSecret).exchange(code, a)
		require.Error(t, err)
		_, _, err = r.exchange(code, authorization{verifier: oauth2.GenerateVerifier()})
		require.Error(t, err)
		require.Equal(t, http.StatusOK, r.userinfo(tok.AccessToken).StatusCode, "a caller not the code's client revoked its tokens")

		_, _, err = r.exchange(code, a)
		requireGrantRefused(t, err)
		res = r.userinfo(tok.AccessToken)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode)
		require.Equal(t, `Bearer error="invalid_token"`, res.Header.Get("WWW-Authenticate"), "RFC 6750 §3.1")
		_, err = r.refresh(tok.RefreshToken)
		requireGrantRefused(t, err)
		all, live := e.oidcTokens()
		require.EqualValues(t, 2, all, "the reuse issued nothing")
		require.Zero(t, live)
	})
}

// TestOpenIDBadPKCEVerifier: a code exchanged with a wrong code_verifier,
// or none, is invalid_grant; the code is not used up (the refusal comes
// before the exchange), so the right verifier still gets the tokens.
func TestOpenIDBadPKCEVerifier(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		for _, client := range []struct{ id, secret string }{{"tool", rpSecret}, {"spa", ""}} {
			r := e.relyingParty(client.id, client.secret)
			res, a := r.authorize(c)
			if res.StatusCode == http.StatusOK {
				res = e.consent(c, res, "allow")
			}
			code := r.codeFrom(res, a)
			before, _ := e.oidcTokens()
			for _, verifier := range []string{oauth2.GenerateVerifier(), ""} {
				_, _, err := r.exchange(code, authorization{state: a.state, nonce: a.nonce, verifier: verifier})
				code, status := oauthError(t, err)
				require.Contains(t, []string{"invalid_grant", "invalid_request"}, code, client.id)
				require.Equal(t, http.StatusBadRequest, status)
			}
			all, _ := e.oidcTokens()
			require.Equal(t, before, all, client.id)
			_, _, err := r.exchange(code, a)
			require.NoError(t, err, client.id)
		}
	})
}

// TestOpenIDPublicClientWithoutPKCE: a public client's authorization
// request without a PKCE challenge, or with the plain method, is refused
// at /authorize: invalid_request back at its (registered) redirect URI
// with the state, and the browser never reaches a sign-in or consent page.
func TestOpenIDPublicClientWithoutPKCE(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("spa", "")
		for _, extra := range [][]string{
			{"code_challenge", "", "code_challenge_method", ""},
			{"code_challenge", strings.Repeat("a", 43), "code_challenge_method", "plain"},
		} {
			res, a := r.authorize(c, extra...)
			require.Equal(t, "invalid_request", r.errorFrom(res, a), extra)
		}
		require.Zero(t, e.authRequests())
	})
}

// TestOpenIDClientAuthentication: a wrong client secret at the token
// endpoint is invalid_client with 401, by client_secret_basic and by
// client_secret_post, and uses nothing up; the right secret works both
// ways.
func TestOpenIDClientAuthentication(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
			r := e.relyingParty("tool", rpSecret)
			r.oauth.Endpoint.AuthStyle = style
			res, a := r.authorize(c)
			code := r.codeFrom(res, a)
			before, _ := e.oidcTokens()
			for _, secret := range []string{"wrong-" + rpSecret, "", rpSecret[:len(rpSecret)-1]} {
				wrong := *r
				wrong.oauth.ClientSecret = secret
				_, _, err := wrong.exchange(code, a)
				code, status := oauthError(t, err)
				require.Equal(t, "invalid_client", code, "style %d, secret %q", style, secret)
				require.Equal(t, http.StatusUnauthorized, status)
			}
			// Another client's secret, another client's code.
			other := e.relyingParty("app", rpSecret)
			other.oauth.Endpoint.AuthStyle = style
			_, _, err := other.exchange(code, a)
			requireGrantRefused(t, err)
			all, _ := e.oidcTokens()
			require.Equal(t, before, all)

			_, _, err = r.exchange(code, a)
			require.NoError(t, err, "style %d", style)
		}
	})
}

// TestOpenIDExpiredCode: a code exchanged after its request's lifetime (10
// minutes) is invalid_grant, and nothing is issued.
func TestOpenIDExpiredCode(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret)
		res, a := r.authorize(c)
		code := r.codeFrom(res, a)
		e.clock.Add(10*time.Minute + time.Second)
		_, _, err := r.exchange(code, a)
		requireGrantRefused(t, err)
		all, _ := e.oidcTokens()
		require.Zero(t, all)

		// A request left waiting at the sign-in page as long is gone too.
		fresh := e.browser()
		page, _ := r.authorize(fresh)
		e.clock.Add(10*time.Minute + time.Second)
		res = e.signInFrom(fresh, page, ada)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, res.body)
		require.Empty(t, res.location())
	})
}

// TestOpenIDPromptNoneWithoutSession: prompt=none in a browser with no
// session answers login_required at the redirect URI with the state,
// without showing the sign-in page.
func TestOpenIDPromptNoneWithoutSession(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		r := e.relyingParty("tool", rpSecret)
		res, a := r.authorize(e.browser(), "prompt", "none")
		require.Equal(t, "login_required", r.errorFrom(res, a))
		all, _ := e.oidcTokens()
		require.Zero(t, all)
	})
}

// TestOpenIDResponseModes: the code comes back in the query (the
// default, or response_mode=query) or the fragment; response_mode=form_post
// (which discovery does not offer) and any other mode are the client's
// invalid_request in the query, before the user is asked anything and
// with nothing stored. The library's form_post answer is a page that posts
// itself from an inline onload handler, which the pages'
// Content-Security-Policy (no script-src) blocks: the browser stopped on a
// blank page holding the code and never got back to the application.
func TestOpenIDResponseModes(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret)
		r.signInFlow(c, "response_mode", "query")

		res, a := r.authorize(c, "response_mode", "fragment")
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		u, err := url.Parse(res.location())
		require.NoError(t, err)
		frag, err := url.ParseQuery(u.Fragment)
		require.NoError(t, err)
		require.Equal(t, a.state, frag.Get("state"))
		_, _, err = r.exchange(frag.Get("code"), a)
		require.NoError(t, err)

		for _, mode := range []string{"form_post", "web_message", "query.jwt"} {
			requests := e.authRequests()
			res, a := r.authorize(c, "response_mode", mode)
			require.Equal(t, "invalid_request", r.errorFrom(res, a), "%s: %s", mode, res.body)
			require.Equal(t, requests, e.authRequests(), "%s: nothing stored", mode)
		}
	})
}

// TestOpenIDPromptNoneWithoutConsent: prompt=none with a session but no
// consent to the client answers consent_required (never the consent
// page); once the user has allowed it, prompt=none gets a code.
func TestOpenIDPromptNoneWithoutConsent(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("app", rpSecret)
		res, a := r.authorize(c, "prompt", "none")
		require.Equal(t, "consent_required", r.errorFrom(res, a))

		r.signInFlow(c) // allows on the consent page
		res, a = r.authorize(c, "prompt", "none")
		_, _, err := r.exchange(r.codeFrom(res, a), a)
		require.NoError(t, err)
	})
}

// TestOpenIDMaxAgeForcesSignIn: with a sign-in older than max_age the
// browser is sent to latchkey's sign-in page; signing in again resumes the
// request, and the ID token's auth_time is the new sign-in. A max_age the
// session meets asks nothing.
func TestOpenIDMaxAgeForcesSignIn(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		first := e.clock.Now().Unix()
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret)
		e.clock.Add(2 * time.Minute)

		_, id := r.signInFlow(c, "max_age", "3600")
		require.Equal(t, first, authTime(t, id))

		page, a := r.authorize(c, "max_age", "60")
		res := e.signInFrom(c, page, ada)
		_, id, err := r.exchange(r.codeFrom(res, a), a)
		require.NoError(t, err)
		require.Equal(t, e.clock.Now().Unix(), authTime(t, id))
		require.Greater(t, authTime(t, id), first)
	})
}

// TestOpenIDPromptLoginForcesSignIn: prompt=login sends even a browser
// signed in a second ago to the sign-in page; the request completes after
// the new sign-in, whose time is the auth_time.
func TestOpenIDPromptLoginForcesSignIn(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret)
		e.clock.Add(time.Second)
		page, a := r.authorize(c, "prompt", "login")
		res := e.signInFrom(c, page, ada)
		_, id, err := r.exchange(r.codeFrom(res, a), a)
		require.NoError(t, err)
		require.Equal(t, e.clock.Now().Unix(), authTime(t, id))
	})
}

// TestOpenIDRefreshAfterUserDeleted: once the user is deleted, the refresh
// token is invalid_grant and the access token answers 401 at userinfo.
func TestOpenIDRefreshAfterUserDeleted(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret, offline...)
		tok, _ := r.signInFlow(c)
		tok, err := r.refresh(tok.RefreshToken)
		require.NoError(t, err)

		e.clock.Add(time.Second)
		_, err = e.app.Store().DeleteUser(context.Background(), e.userID(ada), e.clock.Now())
		require.NoError(t, err)
		_, err = r.refresh(tok.RefreshToken)
		requireGrantRefused(t, err)
		require.Equal(t, http.StatusUnauthorized, r.userinfo(tok.AccessToken).StatusCode)
	})
}

// TestOpenIDRefreshAfterSessionsRevoked: "sign out everywhere" (a session
// revocation) ends the grants of the sign-ins it ends: the refresh token
// is invalid_grant, the access token 401 at userinfo; a new sign-in
// authorizes again.
func TestOpenIDRefreshAfterSessionsRevoked(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret, offline...)
		tok, _ := r.signInFlow(c)

		e.clock.Add(time.Second)
		_, err := e.app.Store().RevokeSessions(context.Background(), e.userID(ada), e.clock.Now())
		require.NoError(t, err)
		_, err = r.refresh(tok.RefreshToken)
		requireGrantRefused(t, err)
		require.Equal(t, http.StatusUnauthorized, r.userinfo(tok.AccessToken).StatusCode)
		_, live := e.oidcTokens()
		require.Zero(t, live)

		e.clock.Add(time.Second)
		tok, _ = r.signInFlow(e.signedIn(ada))
		_, err = r.refresh(tok.RefreshToken)
		require.NoError(t, err)
	})
}

// TestOpenIDRefreshTokenReuse: a refresh token used a second time is
// invalid_grant and revokes its whole family: the newer refresh token is
// refused and every access token of the family answers 401.
func TestOpenIDRefreshTokenReuse(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret, offline...)
		first, _ := r.signInFlow(c)
		second, err := r.refresh(first.RefreshToken)
		require.NoError(t, err)
		require.NotEqual(t, first.RefreshToken, second.RefreshToken, "rotated")
		_, err = r.verify(second)
		require.NoError(t, err, "a refresh answers a new ID token")
		other, _ := r.signInFlow(c) // another family, untouched
		require.Equal(t, http.StatusOK, r.userinfo(second.AccessToken).StatusCode)

		// Someone holding the used token but not tool's secret — as
		// another client, or none — is refused and ends nothing: only the
		// token's own client (authenticated) proves a reuse.
		for _, sender := range []*rp{e.relyingParty("app", rpSecret, offline...), e.relyingParty("tool", "wrong", offline...)} {
			_, err = sender.refresh(first.RefreshToken)
			require.Error(t, err)
		}
		require.Equal(t, http.StatusOK, r.userinfo(second.AccessToken).StatusCode, "a caller not the token's client revoked its family")

		_, err = r.refresh(first.RefreshToken)
		requireGrantRefused(t, err)
		_, err = r.refresh(second.RefreshToken)
		requireGrantRefused(t, err)
		for _, access := range []string{first.AccessToken, second.AccessToken} {
			require.Equal(t, http.StatusUnauthorized, r.userinfo(access).StatusCode)
		}
		require.Equal(t, http.StatusOK, r.userinfo(other.AccessToken).StatusCode)
		_, err = r.refresh(other.RefreshToken)
		require.NoError(t, err)
	})
}

// TestOpenIDRevocation is RFC 7009: revoking a refresh token revokes its
// family (its access tokens too); revoking an access token makes userinfo
// 401 and introspection inactive and leaves the refresh token; another
// client's token is refused and stays live; an unknown token is a 200
// (§2.2); a wrong client secret is 401.
func TestOpenIDRevocation(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret, offline...)

		tok, _ := r.signInFlow(c)
		tok, err := r.refresh(tok.RefreshToken)
		require.NoError(t, err)
		res := r.revoke(tok.RefreshToken, "refresh_token")
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		_, err = r.refresh(tok.RefreshToken)
		requireGrantRefused(t, err)
		require.Equal(t, http.StatusUnauthorized, r.userinfo(tok.AccessToken).StatusCode)
		_, live := e.oidcTokens()
		require.Zero(t, live)

		tok, _ = r.signInFlow(c)
		res = r.revoke(tok.AccessToken, "")
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		require.Equal(t, http.StatusUnauthorized, r.userinfo(tok.AccessToken).StatusCode)
		require.Equal(t, false, r.introspect(tok.AccessToken).json(t)["active"])
		next, err := r.refresh(tok.RefreshToken)
		require.NoError(t, err, "an access token's revocation leaves its refresh token")

		other := e.relyingParty("app", rpSecret)
		for _, token := range []string{next.AccessToken, next.RefreshToken} {
			res = other.revoke(token, "")
			require.NotEqual(t, http.StatusOK, res.StatusCode, res.body)
			require.Contains(t, res.body, "invalid_client")
		}
		require.Equal(t, http.StatusOK, r.userinfo(next.AccessToken).StatusCode)
		_, err = r.refresh(next.RefreshToken)
		require.NoError(t, err)

		res = r.revoke("no-such-token", "")
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		wrong := *r
		wrong.oauth.ClientSecret = "wrong"
		res = wrong.revoke(next.AccessToken, "")
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
	})
}

// TestOpenIDIntrospection is RFC 7662: the owning client learns active,
// sub, scope, client_id of a live access token; a revoked or expired one,
// another client's, or garbage is active=false; without client
// authentication it is 401.
func TestOpenIDIntrospection(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret)
		tok, id := r.signInFlow(c)

		res := r.introspect(tok.AccessToken)
		require.Equal(t, http.StatusOK, res.StatusCode, res.body)
		got := res.json(t)
		require.Equal(t, true, got["active"])
		require.Equal(t, id.Subject, got["sub"])
		require.Equal(t, "tool", got["client_id"])
		require.ElementsMatch(t, []string{"openid", "profile", "email"}, strings.Fields(got["scope"].(string)))

		other := e.relyingParty("app", rpSecret)
		require.Equal(t, false, other.introspect(tok.AccessToken).json(t)["active"], "another client's token")
		require.Equal(t, false, r.introspect("garbage").json(t)["active"])

		res = r.call(http.MethodPost, r.endpoint("introspection_endpoint"), map[string][]string{"token": {tok.AccessToken}})
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.body)
		wrong := *r
		wrong.oauth.ClientSecret = "wrong"
		require.Equal(t, http.StatusUnauthorized, wrong.introspect(tok.AccessToken).StatusCode)

		revoked, _ := r.signInFlow(c)
		require.Equal(t, http.StatusOK, r.revoke(revoked.AccessToken, "").StatusCode)
		require.Equal(t, false, r.introspect(revoked.AccessToken).json(t)["active"])

		e.clock.Add(time.Hour + time.Second) // access_token_lifetime
		require.Equal(t, false, r.introspect(tok.AccessToken).json(t)["active"], "expired")
	})
}

// TestOpenIDKeyRotationWhileTokensLive: after a rotation (the core's
// Rotate, as `latchkey oidc rotate-keys --now` runs it, from another
// process: the instance sees it within its key reload), an ID token signed
// before still verifies — its key is still published — and new tokens
// carry the new key id.
func TestOpenIDKeyRotationWhileTokensLive(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret)
		before, _ := r.signInFlow(c)
		_, oldKid := jwtHeader(t, rawIDToken(t, before))

		e.clock.Add(time.Second) // an admin's command, a moment later
		core, err := openid.New(openidstore.New(e.app.Store()), nil, openid.Settings{
			Algorithm: e.cfg.OpenID.SigningAlgorithm, IDTTL: e.cfg.OpenID.IDTokenLifetime.D(),
			AccessTTL: e.cfg.OpenID.AccessTokenLifetime.D(), RefreshTTL: e.cfg.OpenID.RefreshTokenLifetime.D(),
		}, e.cfg.Secrets(), e.clock.Now, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		ids, err := core.Rotate(context.Background(), 0)
		require.NoError(t, err)
		require.Len(t, ids, 2)
		e.clock.Add(11 * time.Second) // the instance's key reload

		after, _ := r.signInFlow(c)
		_, newKid := jwtHeader(t, rawIDToken(t, after))
		require.NotEqual(t, oldKid, newKid)
		require.Contains(t, ids, newKid)

		// A relying party that never saw the old key set verifies both.
		fresh := e.relyingParty("tool", rpSecret)
		for _, tok := range []*oauth2.Token{before, after} {
			_, err := fresh.verify(tok)
			require.NoError(t, err)
		}
		var jwks struct{ Keys []struct{ Kid string } }
		res := r.call(http.MethodGet, r.endpoint("jwks_uri"), nil)
		require.NoError(t, json.Unmarshal([]byte(res.body), &jwks))
		var kids []string
		for _, k := range jwks.Keys {
			kids = append(kids, k.Kid)
		}
		require.Subset(t, kids, append(ids, oldKid))
	})
}

// TestOpenIDSigningES256: with oidc.signing_algorithm ES256 the ID token's
// header says ES256 and go-oidc, accepting only ES256, verifies it.
func TestOpenIDSigningES256(t *testing.T) {
	eachOP(t, func(c *config.Config) { c.OpenID.SigningAlgorithm = "ES256" }, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret)
		r.verifier = r.provider.VerifierContext(r.ctx(), &oidc.Config{ClientID: "tool", Now: e.clock.Now, SupportedSigningAlgs: []string{oidc.ES256}})
		tok, _ := r.signInFlow(c)
		alg, _ := jwtHeader(t, rawIDToken(t, tok))
		require.Equal(t, "ES256", alg)
		require.Contains(t, r.discovered("id_token_signing_alg_values_supported"), "ES256")
	})
}

// TestOpenIDHintForAnotherUser: an id_token_hint naming another user than
// the browser's is not answered for the browser's user (OpenID Connect
// Core §3.1.2.1): prompt=none gets login_required, otherwise the sign-in
// page, after which the hinted user's sign-in completes the request.
func TestOpenIDHintForAnotherUser(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			e := startOP(t, b, nil)
			r := e.relyingParty("tool", rpSecret)
			ada := e.signedIn("ada@example.com")
			adaTok, adaID := r.signInFlow(ada)
			bob := e.signedIn("bob@example.com")
			before, _ := e.oidcTokens()

			res, a := r.authorize(bob, "prompt", "none", "id_token_hint", rawIDToken(t, adaTok))
			require.Equal(t, "login_required", r.errorFrom(res, a))
			after, _ := e.oidcTokens()
			require.Equal(t, before, after, "nothing issued")

			page, a := r.authorize(bob, "id_token_hint", rawIDToken(t, adaTok))
			res = e.signInFrom(bob, page, "ada@example.com")
			_, id, err := r.exchange(r.codeFrom(res, a), a)
			require.NoError(t, err)
			require.Equal(t, adaID.Subject, id.Subject)
		})
	}
}

// TestOpenIDTokensEndWithSignOutEverywhere: the user's own "sign out
// everywhere" (POST /signout/all, the account page's button) stops the
// applications' tokens as an admin's revoke does, in both session
// strategies: the refresh is refused and the access token answers 401.
// With database sessions it once deleted the rows only, and the
// applications' grants lived on.
func TestOpenIDTokensEndWithSignOutEverywhere(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret, offline...)
		tok, _ := r.signInFlow(c)

		e.clock.Add(time.Second)
		res := e.post(c, "/signout/all", url.Values{"csrfToken": {e.csrf(c)}})
		require.Equal(t, http.StatusFound, res.StatusCode, res.body)
		require.Equal(t, map[string]any{}, e.session(c))
		_, err := r.refresh(tok.RefreshToken)
		requireGrantRefused(t, err)
		require.Equal(t, http.StatusUnauthorized, r.userinfo(tok.AccessToken).StatusCode)

		e.clock.Add(time.Second)
		tok, _ = r.signInFlow(e.signedIn(ada))
		_, err = r.refresh(tok.RefreshToken)
		require.NoError(t, err, "a sign-in after the sign-out everywhere")
	})
}
