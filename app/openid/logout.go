package openid

import (
	"context"
	"fmt"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/latchkey-auth/latchkey/app/finish"
)

// LogoutTTL is how long a logout request waits on latchkey's page.
const LogoutTTL = 10 * time.Minute

// Logout is an application's validated RP-initiated logout request, sealed
// into the URL of latchkey's logout page (nothing is stored).
type Logout struct {
	// UserID is the id_token_hint's subject ("" without a hint): a browser
	// signed in as this user signs out without a question.
	UserID   string `json:"u,omitempty"`
	ClientID string `json:"c,omitempty"`
	// RedirectURI is where the browser goes after (the client's registered
	// post_logout_redirect_uri with its state, or latchkey's default).
	RedirectURI string `json:"r"`
	// UILocales are the request's ui_locales, which pick the page's
	// language as an authorization request's do.
	UILocales string `json:"l,omitempty"`
}

// logoutSealer seals Logout values for the page's URL.
type logoutSealer struct{ codecs []securecookie.Codec }

// TerminateSessionFromRequest hands a validated end-session request to
// latchkey's logout page, which ends the browser's session (asking first
// unless the id_token_hint names the signed-in user) and then redirects.
// Its ui_locales has an authorization request's limit (maxUILocales).
func (s *Service) TerminateSessionFromRequest(_ context.Context, req *op.EndSessionRequest) (string, error) {
	locales := oidc.Locales(req.UILocales).String()
	if len(locales) > maxUILocales {
		return "", oidc.ErrInvalidRequest().WithDescription("ui_locales is longer than %d bytes", maxUILocales)
	}
	l := Logout{UserID: req.UserID, ClientID: req.ClientID, RedirectURI: req.RedirectURI, UILocales: locales}
	v, err := securecookie.EncodeMulti("logout", l, s.logout.codecs[0])
	if err != nil {
		return "", fmt.Errorf("seal logout: %w", err)
	}
	return s.set.LogoutURL(v), nil
}

// OpenLogout unseals the page's logout value (forged or older than
// LogoutTTL: an error).
func (s *Service) OpenLogout(v string) (*Logout, error) {
	var l Logout
	if err := securecookie.DecodeMulti("logout", v, &l, s.logout.codecs...); err != nil {
		return nil, fmt.Errorf("open logout request: %w", err)
	}
	return &l, nil
}

// LoggedOut revokes the client's tokens for the user who signed out
// through it (docs/openid-provider.md: RP-initiated logout ends the
// latchkey session and that application's grant).
func (s *Service) LoggedOut(ctx context.Context, l *Logout, userID string) error {
	if l.ClientID == "" || userID == "" {
		return nil
	}
	ctx, cancel := finish.Detached(ctx) // the session has ended already: the grant follows it
	defer cancel()
	if _, err := s.store.RevokeGrants(ctx, userID, l.ClientID, s.now()); err != nil {
		return fmt.Errorf("revoke grants at logout: %w", err)
	}
	return nil
}
