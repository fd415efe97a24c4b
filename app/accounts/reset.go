package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/finish"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// Password reset. StartReset mails a reset link to an address that has an
// account, and a "there is no such account" e-mail to any other: one
// look-up, one stored row and one e-mail either way, and the same answer. The link (30
// minutes, once) opens a form; CompleteReset sets the new password, marks
// the address verified (the link proved it) and ends every session of the
// user, in one transaction; then the remembered browsers and pending
// e-mail changes go (takeBack) and, when asked (removeLinked), the user's
// linked sign-in methods too. The same link is how a user without a password
// adds one (AddPasswordByEmail).

// StartReset takes the reset form. It returns the normalised address ("":
// not one), for the form.
func (s *Service) StartReset(ctx context.Context, typed, clientIP string) (string, error) {
	addr, err := email.Normalize(typed)
	if err != nil {
		return "", ErrBadAddress
	}
	u, err := s.userByEmail(ctx, addr)
	if err != nil {
		return addr, fmt.Errorf("reset: %w", err)
	}
	if err := s.allowMail(ctx, "reset", addr, clientIP, u); err != nil {
		return addr, err
	}
	if u == nil {
		// The same work as for an account, so the answer's time does not
		// tell (as sign-up's for an existing address): a reset row is
		// stored for no user (the empty id, which none has), inert, as its
		// token is never sent, and goes with the expired links.
		return addr, s.sendReset(ctx, "", func(string) error { return s.Mail.ResetUnknown(ctx, addr) })
	}
	// A user whose address is unverified gets the link too: completing it
	// proves the address, and the owner's proof wins (a claimant with
	// other sign-in methods loses the address and the owner gets a new
	// user: passwordstore.CompletePasswordReset).
	return addr, s.sendResetLink(ctx, u.ID, addr)
}

// sendResetLink stores a reset token for the user and mails its link.
func (s *Service) sendResetLink(ctx context.Context, userID, addr string) error {
	return s.sendReset(ctx, userID, func(token string) error { return s.Mail.ResetLink(ctx, addr, token) })
}

// sendReset stores a reset token for userID and sends mail with it; a
// failed delivery removes the row again.
func (s *Service) sendReset(ctx context.Context, userID string, mail func(token string) error) error {
	_, err := s.links(purposeReset).Send(ctx,
		func(hash string) error {
			return s.Flows.CreatePasswordReset(ctx, userID, hash, s.Now().Add(ResetLinkMaxAge))
		},
		mail,
		func(ctx context.Context, hash string) error { return s.Flows.DeletePasswordReset(ctx, userID, hash) })
	if err != nil {
		return fmt.Errorf("reset link: %w", err)
	}
	return nil
}

// PendingReset is a live reset link: its user, and whether that user has
// linked sign-in methods (the form offers to remove them).
type PendingReset struct {
	TokenHash string
	User      *models.User
	HasLinked bool
}

// OpenReset finds the live reset of a link's token, spending nothing:
// unknown, spent or expired is ErrDeadLink.
func (s *Service) OpenReset(ctx context.Context, token string) (*PendingReset, error) {
	p, err := s.pendingReset(ctx, token)
	if err != nil {
		return nil, err
	}
	linked, err := s.Store.AccountsOf(ctx, p.User.ID)
	if err != nil {
		return nil, fmt.Errorf("reset page: list the user's accounts: %w", err)
	}
	// An unverified user with a linked identity is a claimant the reset
	// takes the address from (models' owner proof): the password goes to a
	// new user, who has nothing to remove.
	p.HasLinked = len(linked) > 0 && p.User.EmailVerified != nil
	return p, nil
}

// pendingReset is OpenReset without the linked methods.
func (s *Service) pendingReset(ctx context.Context, token string) (*PendingReset, error) {
	userID, hash, err := signin.FindLink(s.links(purposeReset), token, func(hash string) (string, error) {
		return s.Flows.PasswordResetByHash(ctx, hash, s.Now())
	})
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, ErrDeadLink
	case err != nil:
		return nil, fmt.Errorf("reset link: %w", err)
	}
	u, err := s.Store.UserByID(ctx, userID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, ErrDeadLink
	case err != nil:
		return nil, fmt.Errorf("reset link: look up the user: %w", err)
	}
	return &PendingReset{TokenHash: hash, User: u}, nil
}

// ResetRequest is a posted reset form.
type ResetRequest struct {
	Token    string
	Password string
	// RemoveLinked asks that the user's linked sign-in methods go too.
	RemoveLinked bool
	// Device is the browser's password device cookie ("" none): the
	// fresh one (PasswordChanged) keeps its other accounts.
	Device string
}

// CompleteReset sets the new password; every session of the user ends.
// The browser that set it gets a fresh password device cookie (the reset
// voided its entry with the sessions): without it, an owner resetting
// while an attacker keeps the account blocked would sign in next as an
// unknown client and meet the same block. The cookie names the user who
// holds the password afterwards (a new one when an unverified claimant
// held the address), so that user's revocations void it. It is returned
// whenever the password was set, with the error of what failed after.
func (s *Service) CompleteReset(ctx context.Context, in ResetRequest) (PasswordChanged, error) {
	var out PasswordChanged
	p, err := s.pendingReset(ctx, in.Token)
	if err != nil {
		return out, err
	}
	u := p.User
	if err := s.checkPolicy("password reset", in.Password, deref(u.Email)); err != nil {
		return out, err
	}
	hash, err := s.hash(in.Password)
	if err != nil {
		return out, err
	}
	at := s.Now()
	holder, ended, err := s.Flows.CompletePasswordReset(ctx, u.ID, p.TokenHash, hash, at)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return out, ErrDeadLink
	case err != nil:
		return out, fmt.Errorf("reset: %w", err)
	}
	s.Log.Info("password reset", "user", holder, "database_sessions_ended", ended)
	ctx, cancel := finish.Detached(ctx) // the password is changed: the rest follows it
	defer cancel()
	s.sessionsEnded(ctx, at) // returns once the revocation's second is over
	if out.Device, out.DeviceExpires, err = s.Throttle.DeviceCookie(in.Device, deref(u.Email), holder, s.Now()); err != nil {
		s.Log.Warn("no password device cookie after a password reset", "err", err)
	}
	if holder != u.ID {
		// An unverified claimant held the address: the password went to a
		// new user. The claimant's browsers and identities are not the
		// owner's to forget or remove.
		return out, nil
	}
	if err := s.takeBack(ctx, u.ID); err != nil {
		// The password is changed and the sessions ended: say so, and
		// that the browsers are still remembered (or the e-mail changes
		// pending).
		return out, fmt.Errorf("reset: the password was changed: %w", err)
	}
	if in.RemoveLinked {
		// The user has a password now: every linked method may go.
		if err := s.removeLinked(ctx, u); err != nil {
			return out, fmt.Errorf("reset: remove linked sign-in methods (the password was changed): %w", err)
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
