package catalogue

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/markbates/goth"
	"github.com/markbates/goth/providers/github"
	"golang.org/x/oauth2"
)

// emailCheck reports whether the provider vouches that the user controls
// u.Email. It reads what goth fetched (u.RawData) and the token response, and
// may ask the provider for more through hc, which is bound to the request's
// context. Anything unexpected — a missing field, a failed request — is a
// "no", never an error: the sign-in goes on with an unverified address.
type emailCheck func(ctx context.Context, hc *http.Client, tok *oauth2.Token, u goth.User) bool

// emailChecks lists the providers that say, for the very address goth
// returns, whether it is verified. Every other catalogue e-mail is
// unverified: the provider either does not say (amazon, facebook, gitea,
// spotify, ...), lets users or administrators set any address (nextcloud,
// the Graph "mail" of microsoftonline/azureadv2 without xms_edov), or states
// it somewhere goth drops (okta keeps four claims of its userinfo; twitch,
// yahoo and line keep no raw data). GitLab is left out on purpose: its
// confirmed_at dates the account's confirmation, not the current address,
// which group SCIM and administrators can change; GitLab's OpenID Connect
// userinfo has a real email_verified, so use the generic OIDC path for it.
var emailChecks = map[string]emailCheck{
	// GET /userinfo, OpenID Connect claims (goth keeps them all).
	"auth0": rawFlag("email_verified"),
	// Graph's mail is set by tenant admins; only xms_edov says more.
	"azureadv2": microsoftEDOV,
	// goth only ever returns a primary address with is_confirmed (bitbucket.go, getEmail).
	"bitbucket": gothPicksVerified,
	// UAA's /userinfo, OpenID Connect claims.
	"cloudfoundry": rawFlag("email_verified"),
	// /oauth2/userInfo's email_verified, which goth copies as the string "EmailVerified".
	"cognito": rawFlag("EmailVerified"),
	// GET /v2/account: {"account": {"email_verified": ...}}.
	"digitalocean": rawFlag("account", "email_verified"),
	// GET /users/@me: "verified" is whether the account's e-mail is verified.
	"discord": rawFlag("verified"),
	// users/get_current_account: email_verified.
	"dropbox":         rawFlag("email_verified"),
	"github":          githubVerified,
	"google":          googleVerified,
	"microsoftonline": microsoftEDOV,
}

// VerifiesEmail reports whether the catalogue can tell a verified e-mail from
// an unverified one for provider id. For every other provider, every e-mail
// is unverified unless the operator sets trust_email.
func VerifiesEmail(id string) bool {
	_, ok := emailChecks[id]
	return ok
}

// VerifyingIDs returns the ids VerifiesEmail accepts, sorted (for docs and tests).
func VerifyingIDs() []string { return slices.Sorted(maps.Keys(emailChecks)) }

// emailVerified applies id's check; false when the provider has none or
// there is no address.
func emailVerified(ctx context.Context, id string, hc *http.Client, tok *oauth2.Token, u goth.User) bool {
	check, ok := emailChecks[id]
	return ok && strings.TrimSpace(u.Email) != "" && check(ctx, hc, tok, u)
}

// rawFlag checks a true-valued flag at path in the JSON goth fetched with the e-mail.
func rawFlag(path ...string) emailCheck {
	return func(_ context.Context, _ *http.Client, _ *oauth2.Token, u goth.User) bool {
		var v any = u.RawData
		for _, k := range path {
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			v = m[k]
		}
		return truthy(v)
	}
}

// gothPicksVerified is for providers whose goth code returns no address at
// all unless the provider marks it verified.
func gothPicksVerified(_ context.Context, _ *http.Client, _ *oauth2.Token, u goth.User) bool {
	return u.Email != ""
}

// googleVerified reads Google's userinfo: goth calls the v2 endpoint
// (verified_email); the OpenID Connect one says email_verified.
func googleVerified(_ context.Context, _ *http.Client, _ *oauth2.Token, u goth.User) bool {
	for _, k := range []string{"verified_email", "email_verified"} {
		if v, ok := u.RawData[k]; ok {
			return truthy(v)
		}
	}
	return false
}

// githubVerified: when /user shows no e-mail, goth reads /user/emails and
// returns only the primary address marked verified (github.go,
// getPrivateMail), failing the sign-in otherwise. When /user shows a public
// e-mail, goth returns it unchecked, so it is looked up in /user/emails here;
// without the user:email scope that request fails and the address stays
// unverified.
func githubVerified(ctx context.Context, hc *http.Client, tok *oauth2.Token, u goth.User) bool {
	if public, _ := u.RawData["email"].(string); public == "" {
		return u.Email != ""
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, github.EmailURL, nil)
	if err != nil {
		return false
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Accept", "application/vnd.github+json")
	res, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	var list []struct {
		Email    string `json:"email"`
		Verified bool   `json:"verified"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&list) != nil {
		return false
	}
	for _, e := range list {
		if sameAddress(e.Email, u.Email) {
			return e.Verified
		}
	}
	return false
}

// microsoftEDOV trusts the Graph address goth returns ("mail", or
// microsoftonline's fallback "userPrincipalName"), which any tenant
// administrator can set to anything, only when the id_token of the same token
// response names that address in its email claim and carries xms_edov (email
// domain owner verified) as true. xms_edov is an optional claim: the app
// registration must add it, and email, to the ID token, and the scopes must
// include openid and email.
//
// The id_token's signature is not checked: it came straight from Microsoft's
// token endpoint over TLS in latchkey's own code exchange, which OpenID
// Connect Core §3.1.3.7 accepts in place of the signature.
func microsoftEDOV(_ context.Context, _ *http.Client, tok *oauth2.Token, u goth.User) bool {
	claims := idTokenClaims(tokenString(tok, "id_token"))
	email, _ := claims["email"].(string)
	return sameAddress(email, u.Email) && truthy(claims["xms_edov"])
}

// idTokenClaims decodes a JWT's payload without checking it (see
// microsoftEDOV for why that is enough there); nil when it is not a JWT.
func idTokenClaims(raw string) map[string]any {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil
	}
	var claims map[string]any
	if json.Unmarshal(b, &claims) != nil {
		return nil
	}
	return claims
}

// truthy accepts the ways providers write "yes": true, "true", "1" or 1.
func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return strings.EqualFold(v, "true") || v == "1"
	case float64:
		return v == 1
	}
	return false
}

func sameAddress(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	return a != "" && strings.EqualFold(a, b)
}
