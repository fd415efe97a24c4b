package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// The passkeys page: a signed-in user lists, renames and removes their own
// passkeys. Every change names the user, so another user's passkey is
// ErrPasskeyNotFound, as an unknown one.

// ErrPasskeyNotFound is a passkey that is not one of the user's.
var ErrPasskeyNotFound = errors.New("no such passkey of the user")

// ListPasskeys is the user's passkeys.
func (s *Service) ListPasskeys(ctx context.Context, userID string) ([]models.Authenticator, error) {
	list, err := s.Passkeys.AuthenticatorsOf(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("list the user's passkeys: %w", err)
	}
	return list, nil
}

// RenamePasskey renames one of the user's passkeys (signin.PasskeyName:
// trimmed and cut, or "Passkey" and the date).
func (s *Service) RenamePasskey(ctx context.Context, userID, id, name string) error {
	err := s.Passkeys.RenameAuthenticator(ctx, userID, id, signin.PasskeyName(name, s.Now()))
	switch {
	case errors.Is(err, models.ErrNotFound):
		return ErrPasskeyNotFound
	case err != nil:
		return fmt.Errorf("rename a passkey: %w", err)
	}
	return nil
}

// RemovePasskey removes one of the user's passkeys, unless it is their last
// way to sign in (signin.ErrLastMethod). The session must have signed in
// recently and, once two-factor is in force, with it (Privileged): a
// passkey is a way in and a second factor, so taking one away is guarded
// as adding one is, and as unlinking an identity.
func (s *Service) RemovePasskey(ctx context.Context, who SignedIn, id string) error {
	if err := s.Privileged(ctx, who); err != nil {
		return err
	}
	userID := who.UserID
	err := s.Core.RemovePasskey(ctx, userID, id, s.Offered.ways())
	switch {
	case errors.Is(err, models.ErrNotFound):
		return ErrPasskeyNotFound
	case err != nil:
		return err
	}
	s.Log.Info("passkey removed", "user", userID)
	s.tellPasskey(ctx, userID, false)
	return nil
}

// PasskeyAdded tells the user's address that a passkey was added (the
// passkey flow calls it once the passkey is stored).
func (s *Service) PasskeyAdded(ctx context.Context, userID string) {
	s.tellPasskey(ctx, userID, true)
}

// tellPasskey mails the user's verified address that a passkey was added
// or removed, as TellMethodAdded does for a linked identity: a passkey is
// as lasting a way in (a password reset leaves it), so one added from a
// borrowed or stolen session must not go unnoticed. A failure is logged
// and undoes nothing.
func (s *Service) tellPasskey(ctx context.Context, userID string, added bool) {
	if s.Mail == nil {
		return
	}
	// The change has committed: a client that hangs up does not stop the
	// notice (notify), nor the look-up before it.
	u, err := s.Store.UserByID(context.WithoutCancel(ctx), userID)
	if err != nil {
		s.Log.Error("passkey changed, but its user could not be read for the notice e-mail", "user", userID, "err", err)
		return
	}
	if u.Email == nil || *u.Email == "" || u.EmailVerified == nil {
		return
	}
	s.notify(ctx, *u.Email, "passkey changed, but the notice e-mail failed",
		func(ctx context.Context) error { return s.Mail.PasskeyChanged(ctx, *u.Email, added) }, "user", u.ID, "added", added)
}

// PasskeyRegistrant is the signed-in user a new passkey is for, and the
// passkeys they have (the authenticator is told not to make a second one).
// A user deleted while the session lives on is ErrSignedOut.
func (s *Service) PasskeyRegistrant(ctx context.Context, userID string) (*models.User, []models.Authenticator, error) {
	u, err := s.SignedInUser(ctx, userID)
	if err != nil {
		return nil, nil, err
	}
	have, err := s.ListPasskeys(ctx, userID)
	if err != nil {
		return nil, nil, err
	}
	return u, have, nil
}
