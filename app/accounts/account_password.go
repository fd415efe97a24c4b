package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/app/finish"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// The signed-in password page. A user with a password changes it by typing
// the current one. A user without one (signed up with OAuth or an e-mail
// link) gets a reset link mailed to their address: the session alone does
// not set a password, since a borrowed or stolen session must not be
// turned into a lasting credential; the inbox re-verifies the person.
// Either way every session of the user ends and the person signs in again.

// SignedInUser is the user of a session's user id: ErrSignedOut for none
// ("") or one deleted while its session lives on.
func (s *Service) SignedInUser(ctx context.Context, id string) (*models.User, error) {
	if id == "" {
		return nil, ErrSignedOut
	}
	u, err := s.Store.UserByID(ctx, id)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, ErrSignedOut
	case err != nil:
		return nil, fmt.Errorf("look up the signed-in user: %w", err)
	}
	return u, nil
}

// HasPassword reports whether the user has a password.
func (s *Service) HasPassword(ctx context.Context, userID string) (bool, error) {
	_, err := s.Store.PasswordHash(ctx, userID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look up the user's password: %w", err)
	}
	return true, nil
}

// PasswordChange is a posted password page of a user with a password.
type PasswordChange struct {
	Current  string
	Password string // the new one
	ClientIP string
	// Device is the browser's password device cookie ("" none), read as
	// the password sign-in reads it.
	Device string
}

// PasswordChanged is what the browser that changed the password gets: a
// fresh password device cookie ("" none), signed in after the change
// ended every session, and so every device cookie entry, of the user.
// The browser proved the password as a sign-in does; without it its owner
// would sign in next as an unknown client, which an attacker keeping the
// account blocked would keep out.
type PasswordChanged struct {
	Device        string
	DeviceExpires time.Time
}

// ChangePassword replaces the user's password when the current one is
// typed right (ErrWrongPassword, ErrThrottled otherwise) and the new one
// passes the policy; every session of the user ends, every browser
// remembered for the second factor is forgotten and every pending e-mail
// change ends. A user without a
// password is ErrNoPassword: they add one by e-mail (AddPasswordByEmail).
// A password changed by another request meanwhile is ErrChangedMeanwhile.
func (s *Service) ChangePassword(ctx context.Context, u *models.User, in PasswordChange) (PasswordChanged, error) {
	var out PasswordChanged
	old, err := s.Store.PasswordHash(ctx, u.ID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return out, ErrNoPassword
	case err != nil:
		return out, fmt.Errorf("password change: %w", err)
	}
	held, err := s.checkPassword(ctx, "password change", deref(u.Email), u.ID, old, in.Current, in.ClientIP, in.Device)
	if err != nil {
		return out, err
	}
	if err := s.checkPolicy("password change", in.Password, deref(u.Email)); err != nil {
		return out, err
	}
	hash, err := s.hash(in.Password)
	if err != nil {
		return out, err
	}
	at := s.Now()
	ended, err := s.Flows.ChangePassword(ctx, u.ID, old, hash, at)
	switch {
	case errors.Is(err, models.ErrConflict):
		return out, ErrChangedMeanwhile
	case err != nil:
		return out, fmt.Errorf("password change: %w", err)
	}
	s.Log.Info("password changed", "user", u.ID, "database_sessions_ended", ended)
	// The password is changed: the rest follows it, as after a reset. A
	// browser remembered for the second factor would otherwise need only
	// the new password (whoever changed it from there included), and a
	// pending e-mail change could move the address (takeBack).
	ctx, cancel := finish.Detached(ctx)
	defer cancel()
	s.sessionsEnded(ctx, at) // returns once the revocation's second is over
	if out.Device, out.DeviceExpires, err = held.DeviceCookie(u.ID, s.Now()); err != nil {
		s.Log.Warn("no password device cookie after a password change", "err", err)
	}
	if err := s.takeBack(ctx, u.ID); err != nil {
		return out, fmt.Errorf("password change: the password was changed: %w", err)
	}
	return out, nil
}

// AddPasswordByEmail mails the signed-in user the link that sets a
// password (a reset link). A user without an address, or whose address is
// an unproved claim (signin.UnprovedClaim: the link, completed, would take
// the address from it), is ErrNoConfirmedEmail, as when no e-mail can be
// sent at all.
func (s *Service) AddPasswordByEmail(ctx context.Context, u *models.User, clientIP string) error {
	claim, err := signin.UnprovedClaim(ctx, s.Store, u)
	switch {
	case err != nil:
		return fmt.Errorf("add password: %w", err)
	case u.Email == nil || claim || s.Mail == nil:
		return ErrNoConfirmedEmail
	}
	// As before this moved here, the owner's exemption from the global
	// budget is not claimed for this e-mail.
	if err := s.allowMail(ctx, "add password", *u.Email, clientIP, nil); err != nil {
		return err
	}
	if err := s.sendResetLink(ctx, u.ID, *u.Email); err != nil {
		return fmt.Errorf("add password: %w", err)
	}
	return nil
}
