package openid

import (
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// authRequest is a stored authorization request as the OP library reads
// it (op.AuthRequest).
type authRequest struct {
	row *openidstore.AuthRequest
	// reused: the code was exchanged already. The library looks a code
	// up before it authenticates the client and checks the verifier, so
	// the reuse is acted on (revoked) only when the tokens are asked
	// for, after those checks: someone holding a leaked code but not its
	// client's secret or verifier cannot end the client's grant.
	reused bool
}

func (a authRequest) GetID() string { return a.row.ID }

// GetACR is "mfa" when the user signed in with two factors, else "sfa"
// (docs/openid-provider.md): the only distinction latchkey can vouch for.
func (a authRequest) GetACR() string         { return acr(a.GetAMR()) }
func (a authRequest) GetAMR() []string       { return strings.Fields(a.row.AMR) }
func (a authRequest) GetAudience() []string  { return []string{a.row.ClientID} }
func (a authRequest) GetClientID() string    { return a.row.ClientID }
func (a authRequest) GetNonce() string       { return a.row.Nonce }
func (a authRequest) GetRedirectURI() string { return a.row.RedirectURI }
func (a authRequest) GetResponseType() oidc.ResponseType {
	return oidc.ResponseType(a.row.ResponseType)
}
func (a authRequest) GetResponseMode() oidc.ResponseMode {
	return oidc.ResponseMode(a.row.ResponseMode)
}
func (a authRequest) GetScopes() []string { return strings.Fields(a.row.Scopes) }
func (a authRequest) GetState() string    { return a.row.State }
func (a authRequest) Done() bool          { return a.row.DoneAt != nil && a.row.UserID != nil }
func (a authRequest) GetSubject() string {
	if a.row.UserID == nil {
		return ""
	}
	return *a.row.UserID
}
func (a authRequest) GetAuthTime() time.Time {
	if a.row.AuthTime == nil {
		return time.Time{}
	}
	return *a.row.AuthTime
}
func (a authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.row.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.row.CodeChallenge, Method: oidc.CodeChallengeMethod(a.row.CodeChallengeMethod)}
}

// refreshRequest is a refresh token as the library reads it
// (op.RefreshTokenRequest): the grant it continues.
type refreshRequest struct {
	row    *openidstore.Token
	scopes []string
	// reused: the token was rotated already. The library compares the
	// token's client with the authenticated one after the lookup, so the
	// family is revoked only when the tokens are asked for, after that
	// check: another client presenting a leaked token cannot end the
	// grant (RFC 6749 §6: authenticate the client first).
	reused bool
}

func (r *refreshRequest) GetAMR() []string            { return strings.Fields(r.row.AMR) }
func (r *refreshRequest) GetAudience() []string       { return strings.Fields(r.row.Audience) }
func (r *refreshRequest) GetAuthTime() time.Time      { return r.row.AuthTime }
func (r *refreshRequest) GetClientID() string         { return r.row.ClientID }
func (r *refreshRequest) GetScopes() []string         { return r.scopes }
func (r *refreshRequest) GetSubject() string          { return r.row.UserID }
func (r *refreshRequest) SetCurrentScopes(s []string) { r.scopes = s }

// acr names the level of a sign-in from its amr values.
func acr(amr []string) string {
	if len(amr) >= 2 || containsAny(amr, "mfa", "otp") {
		return "mfa"
	}
	return "sfa"
}

func containsAny(list []string, want ...string) bool {
	for _, v := range list {
		for _, w := range want {
			if v == w {
				return true
			}
		}
	}
	return false
}
