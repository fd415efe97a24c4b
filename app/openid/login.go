package openid

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Pending is an authorization request waiting for latchkey's pages: the
// user to sign in (again), and perhaps to consent.
type Pending struct {
	ID         string
	Client     *Client
	ClientHost string // where the answer goes (Destination)
	Scopes     []string
	Prompt     []string
	MaxAge     *int64
	LoginHint  string
	// HintSubject: the user the client's id_token_hint names ("": none).
	HintSubject string
	UILocales   string
	// LoginAsked: when this request last sent the browser to sign in (nil:
	// never).
	LoginAsked *time.Time
	Done       bool
}

// Who is the browser's latchkey session, as the request needs it.
type Who struct {
	UserID   string
	SignedIn time.Time
	Methods  []string // amr
	// Unproven: SignedIn is no sign-in of the session's own (a next-auth
	// JWT's iat, session.Session.Proven), so too old for any max_age.
	Unproven bool
}

// Step is what a pending request needs next.
type Step int

const (
	// StepDone: the request is complete; the library answers the client.
	StepDone Step = iota
	// StepSignIn: the user must sign in (again), then come back.
	StepSignIn
	// StepConsent: the user must allow the client.
	StepConsent
)

// ErrPendingGone: the request is unknown, expired or complete already.
var ErrPendingGone = errors.New("openid: authorization request unknown or expired")

// ErrOtherBrowser: the browser about to receive a request's code is not
// signed in as the user who completed the request (or it is not complete).
var ErrOtherBrowser = errors.New("openid: authorization request completed by another browser")

// CompletedBy checks that who, the session of the browser at the
// library's callback, is the user who completed request id: the code goes
// to that browser only. The callback's link carries nothing but the
// request's id, which the browser that started the request read in its
// continue link; without this check an attacker who had a signed-in
// victim open that link fetched the code first (silently for a
// first-party client) and exchanged it with their own PKCE verifier.
func (s *Service) CompletedBy(ctx context.Context, id string, who *Who) error {
	row, err := s.store.AuthRequest(ctx, id, s.now())
	if errors.Is(err, ErrNotFound) {
		return ErrPendingGone
	}
	if err != nil {
		return fmt.Errorf("read auth request: %w", err)
	}
	if row.DoneAt == nil || row.UserID == nil || who == nil || *row.UserID != who.UserID {
		return ErrOtherBrowser
	}
	return nil
}

// Pending reads a request for the pages.
func (s *Service) Pending(ctx context.Context, id string) (*Pending, error) {
	row, err := s.store.AuthRequest(ctx, id, s.now())
	if errors.Is(err, ErrNotFound) {
		return nil, ErrPendingGone
	}
	if err != nil {
		return nil, fmt.Errorf("read auth request: %w", err)
	}
	c, err := s.client(ctx, row.ClientID)
	if errors.Is(err, errUnknownClient) {
		return nil, ErrPendingGone // removed since
	}
	if err != nil {
		return nil, err
	}
	p := &Pending{
		ID: row.ID, Client: c, Scopes: strings.Fields(row.Scopes), Prompt: strings.Fields(row.Prompt),
		MaxAge: row.MaxAge, LoginHint: row.LoginHint, HintSubject: row.HintSubject, UILocales: row.UILocales, LoginAsked: row.LoginAskedAt, Done: row.DoneAt != nil,
	}
	p.ClientHost = Destination(row.RedirectURI)
	return p, nil
}

// Destination is what the consent page names as where the answer goes:
// a web app's redirect URI's host[:port]; a native app's private-use
// scheme (com.example.app:/cb: "com.example.app"), which names the app the
// system hands the answer to (RFC 8252 §7.1), even when the URI has an
// authority; "" when the URI does not parse.
func Destination(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return ""
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return s
	}
	return u.Host
}

// Next decides what the request needs, given the browser's session (nil:
// none). prompt=none never shows a page: it answers login_required or
// consent_required (as *oidc.Error) instead. A sign-in is fresh enough for
// max_age (prompt=login is max_age 0) when it is younger than max_age or
// happened after this request sent the browser to sign in (in whole
// seconds, a JWT's auth_time precision), which is how a forced sign-in ends.
func (s *Service) Next(ctx context.Context, p *Pending, who *Who) (Step, error) {
	none := slices.Contains(p.Prompt, oidc.PromptNone)
	if s.signInNeeded(p, who) {
		if none {
			return 0, oidc.ErrLoginRequired()
		}
		return StepSignIn, nil
	}
	signedInHere := signedInFor(p, who)
	// prompt=select_account (Core §3.1.2.1): the consent page names the
	// signed-in account and offers another; its "Allow" is the choice. A
	// sign-in this request sent the browser to was the choice already.
	if slices.Contains(p.Prompt, oidc.PromptSelectAccount) && !signedInHere {
		if none {
			return 0, errAccountSelectionRequired()
		}
		return StepConsent, nil
	}
	// prompt=consent (Core §3.1.2.1: the OP MUST prompt) asks a
	// first-party client's user too, as dex's skipApprovalScreen does:
	// first_party skips the consent the OP would otherwise ask for, not
	// the one the client asks for.
	if !p.Client.FirstParty || slices.Contains(p.Prompt, oidc.PromptConsent) {
		granted, err := s.consented(ctx, who.UserID, p)
		if err != nil {
			return 0, err
		}
		if !granted || slices.Contains(p.Prompt, oidc.PromptConsent) {
			if none {
				return 0, errConsentRequired()
			}
			return StepConsent, nil
		}
	}
	return StepDone, s.complete(ctx, p, who)
}

// signInNeeded reports whether the request needs the browser to sign in
// (again) before anything else: no session, one of another user than the
// id_token_hint names (OpenID Connect Core §3.1.2.1), or one older than
// max_age (prompt=login is max_age 0) that is not the sign-in this request
// sent the browser to. An unproven session is older than any max_age.
func (s *Service) signInNeeded(p *Pending, who *Who) bool {
	if who == nil || p.HintSubject != "" && who.UserID != p.HintSubject {
		return true
	}
	if p.MaxAge == nil || signedInFor(p, who) {
		return false
	}
	return who.Unproven || s.now().Sub(who.SignedIn) > time.Duration(*p.MaxAge)*time.Second
}

// signedInFor reports whether who signed in after the request sent the
// browser to sign in (in whole seconds, a JWT's auth_time precision); an
// unproven session's time (renewed by next-auth's re-encode) never did.
func signedInFor(p *Pending, who *Who) bool {
	return !who.Unproven && p.LoginAsked != nil && who.SignedIn.Unix() >= p.LoginAsked.Unix()
}

func (s *Service) consented(ctx context.Context, userID string, p *Pending) (bool, error) {
	c, err := s.store.Consent(ctx, userID, p.Client.ID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read consent: %w", err)
	}
	have := strings.Fields(c.Scopes)
	for _, sc := range p.Scopes {
		if !slices.Contains(have, sc) {
			return false, nil
		}
	}
	return true, nil
}

// ErrSignInFirst: a consent was posted for a request that needs the
// browser to sign in (again) first; the caller sends it to sign in.
var ErrSignInFirst = errors.New("openid: the request needs a sign-in before its consent")

// ErrOtherUser: a consent page was posted by a browser now signed in as
// another user than the page was shown to; the caller shows it again.
var ErrOtherUser = errors.New("openid: consent page shown to another user")

// Consent records the user's answer on the consent page: allowed, the
// consent is kept (for these scopes) and the request completes; denied,
// the caller answers the client access_denied. A request that needs a
// sign-in first (signInNeeded) is ErrSignInFirst, whatever the answer:
// posting the form is no way around the sign-in the request asked for
// (prompt=login, max_age, id_token_hint), which the page is not shown
// before. A page shown to another user than who (shownTo: a shared
// browser, signed in again in another tab) is ErrOtherUser: its answer
// was not who's.
func (s *Service) Consent(ctx context.Context, p *Pending, who *Who, shownTo string, allow bool) error {
	if s.signInNeeded(p, who) {
		return ErrSignInFirst
	}
	if who.UserID != shownTo {
		return ErrOtherUser
	}
	if !allow {
		return oidc.ErrAccessDenied().WithDescription("the user denied the request")
	}
	if err := s.store.SaveConsent(ctx, who.UserID, p.Client.ID, strings.Join(p.Scopes, " "), s.now()); err != nil {
		return fmt.Errorf("store consent: %w", err)
	}
	return s.complete(ctx, p, who)
}

// Refused ends request id as its error (a denied consent, prompt=none's
// login_required...) goes to the client, and returns it for the answer:
// the browser cannot complete it afterwards and get a code the client was
// told it would not get. ErrPendingGone when it is over already (expired,
// or completed by a racing answer, which goes to the client instead).
func (s *Service) Refused(ctx context.Context, id string) (op.AuthRequest, error) {
	ar, err := s.AuthRequestByID(ctx, id)
	if err != nil {
		return nil, ErrPendingGone
	}
	ended, err := s.store.EndAuthRequest(ctx, id, s.now())
	if err != nil {
		return nil, fmt.Errorf("end auth request: %w", err)
	}
	if !ended {
		return nil, ErrPendingGone
	}
	return ar, nil
}

// AskedLogin notes that the request sent the browser to sign in.
func (s *Service) AskedLogin(ctx context.Context, p *Pending) error {
	return s.store.AskedLogin(ctx, p.ID, s.now())
}

func (s *Service) complete(ctx context.Context, p *Pending, who *Who) error {
	ok, err := s.store.CompleteAuthRequest(ctx, p.ID, who.UserID, who.SignedIn, strings.Join(who.Methods, " "), s.now())
	if err != nil {
		return fmt.Errorf("complete auth request: %w", err)
	}
	if !ok {
		return ErrPendingGone
	}
	return nil
}

// errAccountSelectionRequired is OpenID Connect Core §3.1.2.6's
// account_selection_required, which the library has no constructor for.
func errAccountSelectionRequired() *oidc.Error {
	return &oidc.Error{ErrorType: "account_selection_required", Description: "the user must choose an account"}
}

// errConsentRequired is OpenID Connect Core §3.1.2.6's consent_required,
// which the library has no constructor for.
func errConsentRequired() *oidc.Error {
	return &oidc.Error{ErrorType: "consent_required", Description: "the user has not allowed this application"}
}

// AccountName is how the consent page names the signed-in user: the
// e-mail address, else the name, else the id.
func (s *Service) AccountName(ctx context.Context, userID string) (string, error) {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return "", fmt.Errorf("read user: %w", err)
	}
	switch {
	case u.Email != nil:
		return *u.Email, nil
	case u.Name != nil:
		return *u.Name, nil
	}
	return u.ID, nil
}
