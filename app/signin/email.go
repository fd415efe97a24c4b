package signin

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/models"
)

// EmailProvider is one e-mail provider as the rules need it.
type EmailProvider struct {
	ID     string
	MaxAge time.Duration // how long a link stays valid
	// Endpoint is the provider's callback URL, which the link points to.
	Endpoint string
	Limits   Limiter // nil: no rate limits
	Mailer   Mailer
}

// LinkRequest is a POST /signin/email.
type LinkRequest struct {
	Email       string // as typed; normalised here
	ClientIP    string
	CallbackURL string // validated, carried in the link
	// Lang is the language tag the page asked in (its lang parameter),
	// added to the link so the pages it opens (confirm, error) speak the
	// e-mail's language; "": next-auth's link, as a client without lang sees.
	Lang string
}

// SentLink is a delivered link as stored: the hash of its token and its
// expiry. The HTTP layer binds it to the browser that asked for it.
type SentLink struct {
	TokenHash string
	Expires   time.Time
}

// SendLink sends a magic link, as next-auth's e-mail sign-in: normalise the
// address, look up its user, count it against the limits, ask the SignIn
// hook (a verification request), store the token's hash and deliver. Every
// refusal leaves nothing stored and nothing sent; a failed delivery removes
// the row it stored.
func (s *Service) SendLink(ctx context.Context, p EmailProvider, in LinkRequest) (*SentLink, error) {
	now := s.Now()
	addr, err := email.Normalize(in.Email)
	if err != nil {
		return nil, Failf(CodeEmailSignin, "provider %s: %w", p.ID, err)
	}
	user, err := s.emailUser(ctx, addr)
	if err != nil {
		return nil, Fail(CodeEmailSignin, err)
	}
	if p.Limits != nil {
		// A user's verified address is spared the global budget, which
		// strangers can spend (email.Request.Owner); the stand-in of an
		// unknown address has none.
		r := email.Request{Addr: addr, ClientIP: in.ClientIP, Owner: user.EmailVerified != nil}
		ok, why, err := p.Limits.Allow(ctx, r, now)
		switch {
		case err != nil: // limits that cannot be checked let no one through: try again
			return nil, Failf(CodeTryLater, "provider %s: %w", p.ID, err)
		case !ok:
			return nil, Failf(CodeEmailSignin, "provider %s: rate limited: %s", p.ID, why)
		}
	}
	in2 := SignInInput{User: *user, Provider: p.ID, Type: "email", Email: addr, EmailVerified: true, VerificationRequest: true}
	if err := s.checkSignIn(ctx, in2); err != nil {
		return nil, err
	}
	sent := &SentLink{Expires: now.Add(p.MaxAge)}
	sent.TokenHash, err = s.signInLinks().Send(ctx,
		func(hash string) error { return s.Tokens.CreateVerificationToken(ctx, addr, hash, sent.Expires) },
		func(token string) error {
			link := email.Link(p.Endpoint, in.CallbackURL, token, addr)
			if in.Lang != "" {
				link += "&lang=" + url.QueryEscape(in.Lang)
			}
			return p.Mailer.SendLink(ctx, addr, link)
		},
		func(ctx context.Context, hash string) error { return s.Tokens.DeleteVerificationToken(ctx, addr, hash) })
	if err != nil {
		return nil, Failf(CodeEmailSignin, "provider %s: %w", p.ID, err)
	}
	return sent, nil
}

// PendingLink is a live link as stored: the address it signs into (the one
// it was sent to, whatever the URL says), its token's hash and its expiry.
type PendingLink struct {
	Identifier string
	TokenHash  string
	Expires    time.Time
}

// LookUpLink finds the live link of a token without spending it: unknown,
// spent or expired is Verification, as redeeming it would be.
func (s *Service) LookUpLink(ctx context.Context, token string) (*PendingLink, error) {
	row, err := s.tokenRow(ctx, token)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, Fail(CodeVerification, errors.New("unknown or already used sign-in link"))
	case err != nil:
		return nil, Fail(CodeCallback, err)
	case !row.Expires.After(s.Now()):
		return nil, Failf(CodeVerification, "sign-in link expired at %s", row.Expires.Format(time.RFC3339))
	}
	return &PendingLink{Identifier: row.Identifier, TokenHash: row.TokenHash, Expires: row.Expires}, nil
}

// OpenedLink is a GET of an e-mailed link.
type OpenedLink struct {
	Provider string
	Token    string
	Email    string // the link's email parameter, "" when absent
	// Bound reports whether the opening browser holds the binding made
	// when this link (by its stored token hash) was sent to it; nil: none.
	Bound func(tokenHash string) bool
	// Confirm is the provider's confirm: true, a page for every link.
	Confirm bool
}

// OpenLink decides what opening a link does. Only the browser that asked
// for the link signs in at once, as next-auth does: anywhere else (another
// device, a mail scanner, a victim lured to an attacker's own link, which
// would sign the victim into the attacker's account: login CSRF) it returns
// the pending link, unspent, for a confirm page that names the stored
// address and signs in only when its button is pressed (RedeemLink). With
// Confirm every browser gets that page. A dead token is Verification
// either way: there is nothing to confirm.
func (s *Service) OpenLink(ctx context.Context, b Browser, in OpenedLink) (*SignedIn, *PendingLink, error) {
	link, err := s.LookUpLink(ctx, in.Token)
	if err != nil {
		return nil, nil, err
	}
	if in.Confirm || in.Bound == nil || !in.Bound(link.TokenHash) {
		return nil, link, nil
	}
	out, err := s.redeem(ctx, b, in.Provider, link, in.Email)
	return out, nil, err
}

// RedeemLink signs in with a link's token: it checks the token without
// spending it, asks the SignIn hook, then consumes it and verifies the
// address in one transaction, ends another user's database session in this
// browser (as next-auth), and starts the session. Until the transaction
// commits nothing has changed, so a refusal leaves the link usable; when the
// session cannot start the token is put back, so a failure does not spend it.
// addr is the link's email parameter ("" when absent); it must match.
func (s *Service) RedeemLink(ctx context.Context, b Browser, provider, token, addr string) (*SignedIn, error) {
	link, err := s.LookUpLink(ctx, token)
	if err != nil {
		return nil, err
	}
	return s.redeem(ctx, b, provider, link, addr)
}

// redeem is RedeemLink after the look-up.
func (s *Service) redeem(ctx context.Context, b Browser, provider string, link *PendingLink, addr string) (*SignedIn, error) {
	if addr != "" && addr != link.Identifier {
		return nil, Fail(CodeVerification, errors.New("the link's e-mail does not match its token"))
	}
	candidate, err := s.emailUser(ctx, link.Identifier)
	if err != nil {
		return nil, Fail(CodeCallback, err)
	}
	if candidate, err = s.provedOwner(ctx, candidate); err != nil {
		return nil, err
	}
	if err := s.checkSignIn(ctx, SignInInput{User: *candidate, Provider: provider, Type: "email", Email: link.Identifier, EmailVerified: true}); err != nil {
		return nil, err
	}
	user, isNew, err := s.Tokens.RedeemVerificationToken(ctx, link.Identifier, link.TokenHash, s.Now())
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, Fail(CodeVerification, errors.New("sign-in link used by a concurrent request"))
	case errors.Is(err, models.ErrConflict):
		return nil, Fail(CodeEmailCreateAccount, err)
	case err != nil:
		return nil, Fail(CodeCallback, err)
	}
	out := &SignedIn{User: user, Provider: provider, IsNew: isNew, LinkHash: link.TokenHash, Methods: []string{twofactor.MethodEmail}}
	if err := s.startSession(ctx, b, out); err != nil {
		return nil, s.restore(ctx, link, err)
	}
	return out, nil
}

// signInLinks are the sign-in links: next-auth's hashes, no purpose.
func (s *Service) signInLinks() MailedLinks { return MailedLinks{Hashes: s.TokenHashes} }

// tokenRow finds a link's row under any of the secrets' hashes.
func (s *Service) tokenRow(ctx context.Context, token string) (*models.VerificationToken, error) {
	row, _, err := FindLink(s.signInLinks(), token, func(hash string) (*models.VerificationToken, error) {
		return s.Tokens.VerificationTokenByHash(ctx, hash)
	})
	return row, err
}

// restore puts a consumed token back after a failure, so the link still
// works; a failed restore is added to the cause.
func (s *Service) restore(ctx context.Context, link *PendingLink, failure error) error {
	if err := s.Tokens.CreateVerificationToken(context.WithoutCancel(ctx), link.Identifier, link.TokenHash, link.Expires); err != nil {
		var e *Error
		if errors.As(failure, &e) {
			e.Cause = errors.Join(e.Cause, fmt.Errorf("the sign-in link could not be restored: %w", err))
		}
	}
	return failure
}

// endPreviousSession deletes the browser's database session, whoever's it
// is, when a new one replaces it, so the replaced session does not live on
// in the table (nor on the account page's list): no browser holds it any
// more. A JWT session is simply overwritten by the new cookie. It never
// stops the sign-in: the new session replaces the cookie either way.
func (s *Service) endPreviousSession(ctx context.Context, b Browser) {
	if s.JWTSessions {
		return
	}
	cur, err := b.SignedInUser(ctx)
	if err != nil || cur == "" {
		return
	}
	if err := b.EndSession(ctx); err != nil {
		s.Log.Warn("previous session not removed", "err", err)
	}
}

// provedOwner is the user a link for u's address signs into, as the SignIn
// hook is shown it: u, unless it holds the address without proof
// (UnprovedClaim). The owner's proof wins: redeeming the link takes the
// address from that claimant and signs the owner into a new user that
// inherits none of its methods (models.releaseUnproved, in the redeeming
// transaction), so the hook sees the stand-in of a new address.
func (s *Service) provedOwner(ctx context.Context, u *models.User) (*models.User, error) {
	claim, err := UnprovedClaim(ctx, s.Users, u)
	switch {
	case err != nil:
		return nil, Fail(CodeCallback, err)
	case claim:
		return StandIn(*u.Email), nil
	}
	return u, nil
}

// emailUser is the user next-auth shows the SignIn hook for an address: the
// stored one, or a stand-in whose id is the address itself.
func (s *Service) emailUser(ctx context.Context, addr string) (*models.User, error) {
	u, err := s.Users.UserByEmail(ctx, addr)
	if errors.Is(err, models.ErrNotFound) {
		return StandIn(addr), nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up user by e-mail: %w", err)
	}
	return u, nil
}
