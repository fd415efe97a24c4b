package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/finish"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/passwordstore"
)

// Sign-up. Nothing about an account is written before its address is
// proved: StartSignUp stores only a pending sign-up (the link's token hash
// and the password's hash) and mails the link; an address that has an
// account gets a "you already have one" e-mail instead, and the answer is
// the same. The link's page asks for the password again, so only the
// person who chose it can finish (CompleteSignUp): someone who signs up
// with a victim's address cannot get the victim to adopt their password by
// clicking (account pre-hijacking), and creates nothing the victim would
// meet when signing in any other way.

// SignUpRequest is a posted sign-up form.
type SignUpRequest struct {
	Email    string // as typed; normalised here
	Password string
	ClientIP string
}

// StartSignUp checks the address and the password (the same for every
// address), asks the SignIn hook, counts the e-mail, hashes the password
// (always: the same work for every address), then stores one pending
// sign-up and sends one e-mail, whichever fits (sendSignUp). It returns
// the normalised address ("" when it is not one), for the form.
func (s *Service) StartSignUp(ctx context.Context, in SignUpRequest) (string, error) {
	addr, err := email.Normalize(in.Email)
	if err != nil {
		return "", ErrBadAddress
	}
	if err := s.checkPolicy("sign-up", in.Password, addr); err != nil {
		return addr, err
	}
	if err := s.signUpAllowed(ctx, "sign-up", addr); err != nil {
		return addr, err
	}
	// An address with an account gets the e-mail that points its owner to
	// a reset: for a verified one, the global budget does not apply.
	u, err := s.userByEmail(ctx, addr)
	if err != nil {
		return addr, fmt.Errorf("sign-up: %w", err)
	}
	if err := s.allowMail(ctx, "sign-up", addr, in.ClientIP, u); err != nil {
		return addr, err
	}
	hash, err := s.hash(in.Password)
	if err != nil {
		return addr, err
	}
	// An unverified holder's address gets the sign-up link: the owner's
	// proof wins (passwordstore.CompletePasswordSignUp).
	return addr, s.sendSignUp(ctx, addr, hash, u != nil && u.EmailVerified != nil)
}

// signUpAllowed asks the SignIn hook (callbacks.allowed_email_domains, or
// an operator's own) about a sign-up's address alone, ErrHookRefused when
// it refuses: an account it would never let in is not made. Its user is
// the stand-in of a new address whether or not one exists, so its answer
// tells nothing about that. Asked when the sign-up starts and again when
// it completes, as the rules may have been tightened during the link's
// 24 h.
func (s *Service) signUpAllowed(ctx context.Context, step, addr string) error {
	if allow, _ := s.Hooks.SignIn(ctx, signin.SignInInput{User: *signin.StandIn(addr), Provider: s.Provider,
		Type: config.TypeCredentials, Email: addr, EmailVerified: true, VerificationRequest: true}); !allow {
		s.Log.Info(step + " refused by the SignIn hook")
		return ErrHookRefused
	}
	return nil
}

// sendSignUp stores a pending sign-up and mails its link, or, when the
// address has an account (exists), the "you already have one" e-mail. Both
// do the same work, so the answer's time does not tell whether an address
// has an account (the insert alone took some 4 ms on SQLite): the pending
// row is stored either way (for an existing account it is inert, as its
// link is never sent, and goes with the expired links) and one e-mail is
// sent; a failed delivery removes the row again and answers the same.
// Sending after answering would hide the time too, but a failed delivery
// could then no longer be told to the person, and a stopping instance
// would have mail left to send.
func (s *Service) sendSignUp(ctx context.Context, addr, pwHash string, exists bool) error {
	_, err := s.links(purposeSignUp).Send(ctx,
		func(hash string) error {
			return s.Flows.CreatePasswordSignUp(ctx, addr, hash, pwHash, s.Now().Add(SignUpLinkMaxAge))
		},
		func(token string) error {
			if exists {
				return s.Mail.SignUpExisting(ctx, addr)
			}
			return s.Mail.SignUpLink(ctx, addr, token)
		},
		func(ctx context.Context, hash string) error { return s.Flows.DeletePasswordSignUp(ctx, hash) })
	if err != nil {
		return fmt.Errorf("sign-up: %w", err)
	}
	return nil
}

// PendingSignUp finds the live sign-up of a link's token, spending nothing:
// unknown, spent or expired is ErrDeadLink.
func (s *Service) PendingSignUp(ctx context.Context, token string) (*passwordstore.PendingSignUp, error) {
	p, _, err := signin.FindLink(s.links(purposeSignUp), token, func(hash string) (*passwordstore.PendingSignUp, error) {
		return s.Flows.PasswordSignUpByHash(ctx, hash, s.Now())
	})
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, ErrDeadLink
	case err != nil:
		return nil, fmt.Errorf("sign-up link: %w", err)
	}
	return p, nil
}

// CompleteSignUp creates the account when the password typed is the one
// chosen at sign-up (ErrWrongPassword, ErrThrottled otherwise): the user,
// verified, with that password, in one transaction that spends the link
// and every other pending sign-up of the address. An address that got an
// account meanwhile keeps it unchanged (ErrAccountExists); one the SignIn
// hook refuses now (signUpAllowed) spends nothing (ErrHookRefused).
func (s *Service) CompleteSignUp(ctx context.Context, token, pw, clientIP string) (*models.User, error) {
	p, err := s.PendingSignUp(ctx, token)
	if err != nil {
		return nil, err
	}
	// No device cookie: the address has no account yet, so none of its
	// entries is live (a deleted account's were revoked with it).
	if _, err := s.checkPassword(ctx, "sign-up", p.Email, "", p.PasswordHash, pw, clientIP, ""); err != nil {
		return nil, err
	}
	if err := s.signUpAllowed(ctx, "sign-up confirmation", p.Email); err != nil {
		return nil, err
	}
	at := s.Now()
	done, err := s.Flows.CompletePasswordSignUp(ctx, p.TokenHash, at)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, ErrDeadLink
	case errors.Is(err, models.ErrConflict):
		s.Log.Info("sign-up confirmation refused: the address has an account")
		return nil, ErrAccountExists
	case err != nil:
		return nil, fmt.Errorf("sign-up: %w", err)
	}
	u := done.User
	if !done.Claimed {
		s.Log.Info("signed up", "user", u.ID)
		return u, nil
	}
	// An unverified user without a way to sign in held the address: it is
	// the owner's now, with the password, and what was signed into it
	// before ends as after a reset (the store ended its sessions).
	s.Log.Info("signed up: the address's unverified user is claimed", "user", u.ID, "database_sessions_ended", done.Ended)
	ctx, cancel := finish.Detached(ctx)
	defer cancel()
	s.sessionsEnded(ctx, at) // returns once the revocation's second is over
	if err := s.takeBack(ctx, u.ID); err != nil {
		s.Log.Warn("signed up, but what the old sessions left stays", "user", u.ID, "err", err)
	}
	return u, nil
}
