package app_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestZZProbe(t *testing.T) {
	e := startOP(t, backends()[0], nil)
	dump := func(name string, r resp) {
		b := r.body
		if len(b) > 300 {
			b = b[:300]
		}
		h := []string{}
		for k, v := range r.Header {
			h = append(h, k+"="+strings.Join(v, ","))
		}
		fmt.Printf("== %s → %d loc=%s\n   hdr=%v\n   body=%s\n", name, r.StatusCode, r.location(), h, b)
	}
	c := e.browser()
	dump("discovery", e.get(c, "/.well-known/openid-configuration"))
	dump("jwks", e.get(c, "/oidc/jwks"))
	dump("authorize bad", e.get(c, "/oidc/authorize?client_id=nope&response_type=code&scope=openid&redirect_uri=x"))
	dump("authorize badredir", e.get(c, "/oidc/authorize?client_id=app&response_type=code&scope=openid&redirect_uri=http://evil/"))
	dump("authorize ok", e.get(c, "/oidc/authorize?client_id=app&response_type=code&scope=openid&redirect_uri="+url.QueryEscape(rpRedirect)+"&state=s&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"))
	dump("authorize prompt none", e.get(c, "/oidc/authorize?client_id=app&response_type=code&scope=openid&prompt=none&redirect_uri="+url.QueryEscape(rpRedirect)+"&state=s"))
	dump("token empty", e.post(c, "/oidc/token", url.Values{}))
	dump("token badcode", e.post(c, "/oidc/token", url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "client_id": {"app"}, "client_secret": {rpSecret}, "redirect_uri": {rpRedirect}}))
	dump("token badsecret", e.post(c, "/oidc/token", url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "client_id": {"app"}, "client_secret": {"no"}}))
	dump("userinfo none", e.get(c, "/oidc/userinfo"))
	req, _ := http.NewRequest("GET", e.url("/oidc/userinfo"), nil)
	req.Header.Set("Authorization", "Bearer nope")
	dump("userinfo bad", e.do(c, req))
	dump("introspect none", e.post(c, "/oidc/introspect", url.Values{"token": {"x"}}))
	dump("introspect ok", e.post(c, "/oidc/introspect", url.Values{"token": {"x"}, "client_id": {"app"}, "client_secret": {rpSecret}}))
	dump("revoke", e.post(c, "/oidc/revoke", url.Values{"token": {"x"}, "client_id": {"app"}, "client_secret": {rpSecret}}))
	dump("revoke noauth", e.post(c, "/oidc/revoke", url.Values{"token": {"x"}}))
	dump("end_session", e.get(c, "/oidc/end_session"))
	dump("end_session post", e.post(c, "/oidc/end_session", url.Values{"client_id": {"app"}, "post_logout_redirect_uri": {rpLogout}}))
	dump("continue none", e.get(c, "/oidc/continue"))
	dump("continue bad", e.get(c, "/oidc/continue?id=abc"))
	dump("consent get", e.get(c, "/oidc/consent?id=abc"))
	dump("consent post", e.post(c, "/oidc/consent", url.Values{"csrfToken": {e.csrf(c)}, "id": {"abc"}, "decision": {"allow"}}))
	dump("logout get", e.get(c, "/oidc/logout"))
	dump("logout post", e.post(c, "/oidc/logout", url.Values{"csrfToken": {e.csrf(c)}}))
	dump("callback", e.get(c, "/oidc/authorize/callback?id=abc"))
	dump("list-apps out", e.get(c, "/list-apps"))
	dump("revoke-app out", e.post(c, "/revoke-app", url.Values{"csrfToken": {e.csrf(c)}, "clientId": {"app"}}))
	s := e.signedIn("ada@example.com")
	dump("list-apps in", e.get(s, "/list-apps"))
	dump("revoke-app in", e.post(s, "/revoke-app", url.Values{"csrfToken": {e.csrf(s)}, "clientId": {"app"}}))
	dump("revoke-app in none", e.post(s, "/revoke-app", url.Values{"csrfToken": {e.csrf(s)}}))
	dump("revoke-app in json", e.post(s, "/revoke-app", url.Values{"csrfToken": {e.csrf(s)}, "clientId": {"app"}, "json": {"true"}}))
	dump("logout in", e.get(s, "/oidc/logout"))
	dump("end_session in", e.get(s, "/oidc/end_session?client_id=app&post_logout_redirect_uri="+url.QueryEscape(rpLogout)))
	dump("opts", e.do(c, func() *http.Request { r, _ := http.NewRequest("OPTIONS", e.url("/oidc/token"), nil); r.Header.Set("Origin", "http://x.example"); r.Header.Set("Access-Control-Request-Method", "POST"); return r }()))
	dump("put", e.do(c, func() *http.Request { r, _ := http.NewRequest("PUT", e.url("/oidc/token"), nil); return r }()))
	dump("nope", e.get(c, "/oidc/nope"))
}
