package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// DeleteWord is what a user without an address types to delete the
// account; a user with one types the address.
const DeleteWord = "DELETE"

// DeleteConfirmWord is what u must type to delete the account.
func DeleteConfirmWord(u *models.User) string {
	if u.Email != nil && *u.Email != "" {
		return *u.Email
	}
	return DeleteWord
}

// DeleteAccount removes the user and everything that is theirs — linked
// accounts, sessions, passkeys, the password, pending links, two-factor —
// in one transaction (models.Store.DeleteUser and the foreign keys), ends
// their JWT sessions on every instance through the revocation set, signs
// the browser out and tells the address. It needs a session that may
// (Privileged: a recent sign-in, with the second factor once it is on) and the
// typed confirmation (DeleteConfirmWord, case aside), and the operator may
// turn it off (account.self_delete). A sign-in racing the deletion finds
// no user, or its new session's row (or sign-in record) no user to belong
// to: nothing can sign back in.
func (s *Service) DeleteAccount(ctx context.Context, b Browser, who SignedIn, u *models.User, typed string) error {
	if !s.SelfDelete {
		return ErrSelfDeleteOff
	}
	if err := s.Privileged(ctx, who); err != nil {
		return err
	}
	switch {
	case !strings.EqualFold(strings.TrimSpace(typed), DeleteConfirmWord(u)):
		return ErrDeleteConfirm
	}
	// The revocation reaches a second past now: a JWT sign-in racing the
	// deletion, whose record the deletion's cascade removes, is refused
	// even when it is minted in the next second (no one can sign in as a
	// deleted user later: its rows are gone).
	at := s.Now().Add(time.Second)
	d, err := s.Store.DeleteUser(ctx, u.ID, at)
	if errors.Is(err, models.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete the account: %w", err)
	}
	s.Log.Info("account deleted by its user", "user", u.ID, "database_sessions", d.Sessions, "accounts", d.Accounts)
	s.sessionsEnded(ctx, at)
	if err := b.EndSession(ctx); err != nil {
		s.Log.Warn("account deleted; the browser's cookie was not cleared", "user", u.ID, "err", err)
	}
	if u.Email != nil && *u.Email != "" && u.EmailVerified != nil && s.Mail != nil {
		s.notify(ctx, *u.Email, "account deleted, but the notice e-mail failed",
			func(ctx context.Context) error { return s.Mail.AccountDeleted(ctx, *u.Email) }, "user", u.ID)
	}
	return nil
}
