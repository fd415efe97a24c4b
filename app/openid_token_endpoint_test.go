package app_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The token, revocation and introspection endpoints as RFC 6749 §5,
// RFC 7009 and RFC 7662 say a client sees them: answers never cached,
// a failed client authentication a 401 invalid_client that names its
// scheme and does not tell an unknown client from a wrong secret, an
// unknown client never a 500, and a revocation that finds the token
// whatever type the client hinted.

// TestOpenIDTokenAnswersAreNotCached: a token response carries
// Cache-Control: no-store and Pragma: no-cache (RFC 6749 §5.1), its
// errors and the introspection's answers too.
func TestOpenIDTokenAnswersAreNotCached(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		r := e.relyingParty("tool", rpSecret, offline...)
		res, a := r.authorize(e.signedIn(ada))
		form := url.Values{"grant_type": {"authorization_code"}, "code": {r.codeFrom(res, a)}, "redirect_uri": {rpRedirect}, "code_verifier": {a.verifier}}
		auth := basicAuth("tool", rpSecret)
		for name, got := range map[string]resp{
			"tokens":        r.call(http.MethodPost, r.endpoint("token_endpoint"), form, "Authorization", auth),
			"refused":       r.call(http.MethodPost, r.endpoint("token_endpoint"), form, "Authorization", auth), // the code again
			"introspection": r.introspect("nothing"),
		} {
			require.Contains(t, got.Header.Get("Cache-Control"), "no-store", "%s %d %s", name, got.StatusCode, got.body)
			require.Equal(t, "no-cache", got.Header.Get("Pragma"), name)
		}
	})
}

// TestOpenIDClientAuthenticationFailures: a wrong secret, an unknown
// client or none at all at the token, revocation and introspection
// endpoints is 401 {"error":"invalid_client"} as JSON with a
// WWW-Authenticate header naming Basic (RFC 6749 §5.2), the same body for
// an unknown client as for a wrong secret; an unknown client at
// end_session is a 400, never a 500.
func TestOpenIDClientAuthenticationFailures(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		r := e.relyingParty("tool", rpSecret, offline...)
		tok, _ := r.signInFlow(e.signedIn(ada))
		refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
		bodies := map[string]string{}
		for _, endpoint := range []string{"token_endpoint", "revocation_endpoint", "introspection_endpoint"} {
			form := refresh
			if endpoint != "token_endpoint" {
				form = url.Values{"token": {tok.RefreshToken}}
			}
			for name, auth := range map[string]string{
				"wrong secret":   basicAuth("tool", "wrong"),
				"unknown client": basicAuth("nope", rpSecret),
			} {
				got := r.call(http.MethodPost, r.endpoint(endpoint), form, "Authorization", auth)
				require.Equal(t, http.StatusUnauthorized, got.StatusCode, "%s %s: %s", endpoint, name, got.body)
				require.Contains(t, got.Header.Get("WWW-Authenticate"), "Basic", "%s %s", endpoint, name)
				require.Contains(t, got.Header.Get("Content-Type"), "application/json", "%s %s: %s", endpoint, name, got.body)
				require.Contains(t, got.body, `"error":"invalid_client"`, "%s %s", endpoint, name)
				bodies[endpoint+" "+name] = got.body
			}
			require.Equal(t, bodies[endpoint+" wrong secret"], bodies[endpoint+" unknown client"], endpoint)
		}
		got := r.call(http.MethodPost, r.endpoint("token_endpoint"), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {"nope"}})
		require.Equal(t, http.StatusUnauthorized, got.StatusCode, got.body)
		require.Contains(t, got.body, `"error":"invalid_client"`)
		got = r.call(http.MethodGet, r.endpoint("end_session_endpoint")+"?client_id=nope", nil)
		require.Equal(t, http.StatusBadRequest, got.StatusCode, got.body)

		_, err := r.refresh(tok.RefreshToken)
		require.NoError(t, err, "no refusal above revoked or spent the grant")
	})
}

// TestOpenIDRevokeFindsTheTokenWhateverTheHint: a refresh token revoked
// with token_type_hint=access_token (a client's mistake) is revoked all
// the same (RFC 7009 §2.1: the server extends its search): it answered
// 200 and the token went on refreshing for 30 days.
func TestOpenIDRevokeFindsTheTokenWhateverTheHint(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		r := e.relyingParty("tool", rpSecret, offline...)
		tok, _ := r.signInFlow(e.signedIn(ada))
		got := r.revoke(tok.RefreshToken, "access_token")
		require.Equal(t, http.StatusOK, got.StatusCode, got.body)
		_, err := r.refresh(tok.RefreshToken)
		requireGrantRefused(t, err)
		require.Equal(t, http.StatusUnauthorized, r.userinfo(tok.AccessToken).StatusCode, "the family's access token goes with it")

		other := e.relyingParty("app", rpSecret, offline...)
		tok, _ = r.signInFlow(e.signedIn(ada))
		require.NotEqual(t, http.StatusOK, other.revoke(tok.RefreshToken, "access_token").StatusCode, "another client's token")
		_, err = r.refresh(tok.RefreshToken)
		require.NoError(t, err, "another client cannot revoke it")
	})
}

// TestOpenIDSelectAccount: prompt=select_account (OpenID Connect Core
// §3.1.2.1) shows the page that names the signed-in account and offers
// another — for a first-party client too, which otherwise gets its code
// at once — and its "Allow" is the choice; it was ignored and the code
// issued for whoever was signed in. prompt=consent shows the consent page
// to a first-party client too.
func TestOpenIDSelectAccount(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		c := e.signedIn(ada)
		r := e.relyingParty("tool", rpSecret)
		page, a := r.authorize(c, "prompt", "select_account")
		require.Equal(t, http.StatusOK, page.StatusCode, "no page: %s", page.location())
		require.Contains(t, page.body, ada)
		_, _, err := r.exchange(r.codeFrom(e.consent(c, page, "allow"), a), a)
		require.NoError(t, err)

		// prompt=consent (Core §3.1.2.1: the OP MUST prompt) shows the
		// consent page to a first-party client too, as dex's
		// skipApprovalScreen does; it was skipped and the code issued.
		page, a = r.authorize(c, "prompt", "consent")
		require.Equal(t, http.StatusOK, page.StatusCode, "prompt=consent showed no page: %s", page.location())
		_, _, err = r.exchange(r.codeFrom(e.consent(c, page, "allow"), a), a)
		require.NoError(t, err)
	})
}

// TestOpenIDRefreshWithNarrowerScopeKeepsTheGrant: a refresh that asks
// for fewer scopes (RFC 6749 §6) gets an access token and an ID token of
// those, and a new refresh token of the grant's scopes, as §6 says ("the
// refresh token scope MUST be identical"): the next refresh may ask for
// the others again. The narrowed scopes once went to the new refresh
// token, and the client lost the others for good (invalid_scope).
func TestOpenIDRefreshWithNarrowerScopeKeepsTheGrant(t *testing.T) {
	eachOP(t, nil, func(t *testing.T, e *env) {
		r := e.relyingParty("tool", rpSecret, offline...)
		tok, _ := r.signInFlow(e.signedIn(ada))
		refresh := func(token, scope string) map[string]any {
			form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}}
			if scope != "" {
				form.Set("scope", scope)
			}
			res := r.call(http.MethodPost, r.endpoint("token_endpoint"), form, "Authorization", basicAuth("tool", rpSecret))
			require.Equal(t, http.StatusOK, res.StatusCode, "scope %q: %s", scope, res.body)
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(res.body), &m))
			return m
		}
		narrow := refresh(tok.RefreshToken, "openid")
		require.Equal(t, "openid", narrow["scope"])
		info := r.userinfo(narrow["access_token"].(string))
		require.Equal(t, http.StatusOK, info.StatusCode)
		require.NotContains(t, info.body, ada, "the narrowed access token reads no e-mail")

		wide := refresh(narrow["refresh_token"].(string), "openid email")
		require.Equal(t, "openid email", wide["scope"])
		again := refresh(wide["refresh_token"].(string), "")
		require.ElementsMatch(t, offline, strings.Fields(again["scope"].(string)))
		require.Contains(t, r.userinfo(again["access_token"].(string)).body, ada)
	})
}
