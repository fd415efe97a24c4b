package openid

import (
	"context"
	"errors"
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
// Its post_logout_redirect_uri is held to the authorization request's
// rule (postLogoutAllowed).
func (s *Service) TerminateSessionFromRequest(ctx context.Context, req *op.EndSessionRequest) (string, error) {
	if err := s.postLogoutAllowed(ctx, req.ClientID); err != nil {
		return "", err
	}
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

// postLogoutKey carries an end_session request's post_logout_redirect_uri
// in its context (WithPostLogoutURI).
type postLogoutKey struct{}

// WithPostLogoutURI gives ctx the post_logout_redirect_uri an end_session
// request sent ("": none) — the value the library decodes, its last — since
// the library passes TerminateSessionFromRequest only the redirect it
// built, with the state merged in.
func WithPostLogoutURI(ctx context.Context, uri string) context.Context {
	return context.WithValue(ctx, postLogoutKey{}, uri)
}

// postLogoutAllowed holds the post_logout_redirect_uri in ctx to the
// client's registered ones as redirectRegistered holds a redirect URI: the
// library's own match let a native app's loopback one differ in anything
// but its path and query. Without a client the library ignores the URI.
// A context without the URI (the wiring forgot) fails closed.
func (s *Service) postLogoutAllowed(ctx context.Context, clientID string) error {
	uri, ok := ctx.Value(postLogoutKey{}).(string)
	if !ok {
		return errors.New("openid: end_session's post_logout_redirect_uri was not passed on")
	}
	if uri == "" || clientID == "" {
		return nil
	}
	c, err := s.client(ctx, clientID)
	if err != nil {
		return err
	}
	if !c.postLogoutRegistered(uri) {
		return oidc.ErrInvalidRequest().WithDescription("post_logout_redirect_uri invalid")
	}
	return nil
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
