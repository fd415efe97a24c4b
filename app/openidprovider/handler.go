// Package openidprovider is the handler of latchkey's OpenID Provider
// (docs/openid-provider.md): it mounts zitadel/oidc's OP (discovery, keys,
// authorize, token, userinfo, introspection, revocation, end-session)
// under the base path, and latchkey's own pages the protocol hands the
// browser to — where an authorization request waits through sign-in and
// consent, and where an application's logout ends the session. The rules
// are in app/openid.
package openidprovider

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"

	httphelper "github.com/zitadel/oidc/v3/pkg/http"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/web"
)

// The routes below the base path. The OP library's own live under /oidc/
// (Endpoints), discovery where OpenID Connect Discovery puts it: the
// issuer (the base URL) + /.well-known/openid-configuration.
const (
	discovery    = "/.well-known/openid-configuration"
	protocol     = "/oidc/*"
	continuePage = "/oidc/continue"
	consentPath  = "/oidc/consent"
	logoutPage   = "/oidc/logout"
	callbackPath = "/oidc/authorize/callback"
)

// Endpoints are the OP's endpoints, relative to the issuer.
var endpoints = map[string]string{
	"authorization": "oidc/authorize", "token": "oidc/token", "userinfo": "oidc/userinfo",
	"introspection": "oidc/introspect", "revocation": "oidc/revoke", "end_session": "oidc/end_session", "jwks": "oidc/jwks",
}

// Handler owns the provider's routes.
type Handler struct {
	kit      *web.Kit
	base     config.Base
	rules    *openid.Service
	provider *op.Provider
	// answers is the provider as its answers to a client's redirect URI
	// go (with iss).
	answers *answering
	// lib is the library's routes, under the base path.
	lib      http.Handler
	sessions session.Strategy
	log      *slog.Logger
}

// Deps are what New builds the handler from.
type Deps struct {
	Kit      *web.Kit
	Base     config.Base
	Rules    *openid.Service
	Sessions session.Strategy
	// Secrets seal the opaque access tokens (the first seals; every one
	// opens, so AUTH_SECRET rotation keeps live tokens working).
	Secrets []string
	// Languages are the pages' languages, for discovery's ui_locales_supported.
	Languages []string
	// ClientIP is the request's client as trusted_proxies reads it, which
	// the authorization request limits count (openid.Settings.Limits).
	ClientIP func(*http.Request) string
	Log      *slog.Logger
}

// New builds the OP on the rules.
func New(d Deps) (*Handler, error) {
	crypto, err := tokenCrypto(d.Secrets)
	if err != nil {
		return nil, err
	}
	var locales []language.Tag
	for _, l := range d.Languages {
		if t, err := language.Parse(l); err == nil {
			locales = append(locales, t)
		}
	}
	cfg := &op.Config{
		CodeMethodS256: true, AuthMethodPost: true, GrantTypeRefreshToken: true,
		SupportedUILocales: locales, SupportedScopes: config.OpenIDScopes,
		SupportedClaims: []string{"sub", "aud", "exp", "iat", "iss", "auth_time", "nonce", "acr", "amr", "at_hash", "c_hash", "azp",
			"name", "picture", "email", "email_verified", "groups"},
		DefaultLogoutRedirectURI: d.Base.URL("/signin"),
	}
	answers := newAnswering(Issuer(d.Base))
	opts := []op.Option{
		op.WithCustomEndpoints(op.NewEndpoint(endpoints["authorization"]), op.NewEndpoint(endpoints["token"]),
			op.NewEndpoint(endpoints["userinfo"]), op.NewEndpoint(endpoints["revocation"]),
			op.NewEndpoint(endpoints["end_session"]), op.NewEndpoint(endpoints["jwks"])),
		op.WithCustomIntrospectionEndpoint(op.NewEndpoint(endpoints["introspection"])),
		op.WithCrypto(crypto),
		op.WithHttpInterceptors(answers.intercept),
		// No op.WithLogger: this version of the library ignores it and logs
		// its refusals through slog's default logger only, which main sets
		// to the app's (setDefaultLogger). The refusals latchkey answers
		// itself (parsedAuthorize, the pages) log through d.Log.
	}
	if !d.Base.Secure {
		opts = append(opts, op.WithAllowInsecure()) // http://localhost in development
	}
	provider, err := op.NewProvider(cfg, d.Rules, op.StaticIssuer(Issuer(d.Base)), opts...)
	if err != nil {
		return nil, fmt.Errorf("openid provider: %w", err)
	}
	answers.use(provider)
	lib := http.StripPrefix(d.Base.Path, refusals(parsedAuthorize(withRequestFacts(provider, d.ClientIP), provider.Decoder(), d.Log), Issuer(d.Base)))
	return &Handler{kit: d.Kit, base: d.Base, rules: d.Rules, provider: provider, answers: answers, lib: lib, sessions: d.Sessions, log: d.Log}, nil
}

// withRequestFacts gives the rules what the library does not pass them of
// a request, in its context: an authorization request's client address,
// which CreateAuthRequest counts; an end_session request's
// post_logout_redirect_uri as sent (its last value, the one the library
// decodes), which TerminateSessionFromRequest checks; a token request's
// room for what its ID token is built from (openid.WithTokenRequest).
// Other endpoints go as they are. refusals has parsed end_session's form
// already.
func withRequestFacts(next http.Handler, clientIP func(*http.Request) string) http.Handler {
	authorize, endSession, token := "/"+endpoints["authorization"], "/"+endpoints["end_session"], "/"+endpoints["token"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == token:
			r = r.WithContext(openid.WithTokenRequest(r.Context()))
		case r.URL.Path == authorize && clientIP != nil:
			r = r.WithContext(openid.WithClientIP(r.Context(), clientIP(r)))
		case r.URL.Path == endSession:
			uri := ""
			if v := r.Form["post_logout_redirect_uri"]; len(v) > 0 {
				uri = v[len(v)-1]
			}
			r = r.WithContext(openid.WithPostLogoutURI(r.Context(), uri))
		}
		next.ServeHTTP(w, r)
	})
}

// Issuer is the OP's issuer: the base URL (SERVICE_URL), so discovery
// follows a custom base path.
func Issuer(b config.Base) string { return b.URL("") }

// LoginURL and LogoutURL are the pages the rules send the browser to.
func LoginURL(b config.Base) func(string) string {
	return func(id string) string { return web.WithQuery(b.URL(continuePage), map[string][]string{"id": {id}}) }
}

func LogoutURL(b config.Base) func(string) string {
	return func(v string) string { return web.WithQuery(b.URL(logoutPage), map[string][]string{"logout": {v}}) }
}

// Mount implements the app's mounter.
func (h *Handler) Mount(m web.Mux) {
	m.Protocol(discovery, http.HandlerFunc(h.discovery))
	m.Protocol(protocol, h.lib)
	m.Page(callbackPath, h.getCallback, web.KeepOpener)
	m.Page(continuePage, h.getContinue, web.KeepOpener)
	m.Post(consentPath, h.postConsent, h.consentMismatch, web.KeepOpener)
	m.Page(logoutPage, h.getLogout, web.KeepOpener)
	m.Post(logoutPage, h.postLogout, h.kit.RetryPage(logoutPage), web.KeepOpener)
}

// tokenCrypto seals access tokens with AES-256-GCM under a key derived
// from each secret: the first seals, all open.
func tokenCrypto(secrets []string) (op.Crypto, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("openid provider: no secret")
	}
	var first op.Encrypter
	decrypters := make([]op.Decrypter, 0, len(secrets))
	for i, s := range secrets {
		raw, err := hkdf.Key(sha256.New, []byte(s), nil, "latchkey OpenID access token key", 32)
		if err != nil {
			return nil, fmt.Errorf("openid provider: token key: %w", err)
		}
		var key [32]byte
		copy(key[:], raw)
		c := op.NewAES256GCMCrypto(key, fmt.Sprint(i))
		if i == 0 {
			first = c
		}
		decrypters = append(decrypters, c)
	}
	return op.NewCompositeCrypto(first, decrypters), nil
}

// discovery is the library's discovery document with what latchkey
// supports in place of the library's defaults, which list the implicit
// response types and grant and a device authorization endpoint whatever
// the provider supports (a relying party that believed them would pick a
// flow latchkey refuses): the code flow with refresh tokens only, and the
// acr values it sets. The library also lists signing algorithms for JWT
// client authentication at revocation and introspection, which no
// endpoint accepts (no private_key_jwt): none are listed. It adds
// authorization_response_iss_parameter_supported (RFC 9207 §3), which the
// library's document has no field for: latchkey's authorization answers
// carry iss (answering), and a client that reads this checks it.
func (h *Handler) discovery(w http.ResponseWriter, r *http.Request) {
	d := op.CreateDiscoveryConfig(op.ContextWithIssuer(r.Context(), Issuer(h.base)), h.provider, h.rules)
	d.ResponseTypesSupported = []string{string(oidc.ResponseTypeCode)}
	d.GrantTypesSupported = []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
	d.ACRValuesSupported = []string{"sfa", "mfa"}
	d.DeviceAuthorizationEndpoint = ""
	d.RevocationEndpointAuthSigningAlgValuesSupported = nil
	d.IntrospectionEndpointAuthSigningAlgValuesSupported = nil
	w.Header().Set("Access-Control-Allow-Origin", "*") // read by browser apps (public clients)
	httphelper.MarshalJSON(w, struct {
		*oidc.DiscoveryConfiguration
		IssParameter bool `json:"authorization_response_iss_parameter_supported"`
	}{d, true})
}
