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
	list, err := s.Store.AuthenticatorsOf(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("list the user's passkeys: %w", err)
	}
	return list, nil
}

// RenamePasskey renames one of the user's passkeys (signin.PasskeyName:
// trimmed and cut, or "Passkey" and the date).
func (s *Service) RenamePasskey(ctx context.Context, userID, id, name string) error {
	err := s.Store.RenameAuthenticator(ctx, userID, id, signin.PasskeyName(name, s.Now()))
	switch {
	case errors.Is(err, models.ErrNotFound):
		return ErrPasskeyNotFound
	case err != nil:
		return fmt.Errorf("rename a passkey: %w", err)
	}
	return nil
}

// RemovePasskey removes one of the user's passkeys, unless it is their last
// way to sign in (signin.ErrLastMethod).
func (s *Service) RemovePasskey(ctx context.Context, userID, id string) error {
	hasPassword, err := s.passwordSignIn(ctx, userID)
	if err != nil {
		return err
	}
	err = s.Core.RemovePasskey(ctx, userID, id, s.Offered.Email, hasPassword)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return ErrPasskeyNotFound
	case err != nil:
		return err
	}
	s.Log.Info("passkey removed", "user", userID)
	return nil
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
