package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models/events"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// DeleteUser and the unlinks are the admin commands' and the account
// page's writes; the admin commands' listings are in models/adminstore.

// Deleted is what DeleteUser removed.
type Deleted struct{ Accounts, Sessions, Tokens int64 }

// DeleteUser removes a user with its linked accounts, database sessions and
// pending links (sign-in, reset, e-mail change), and revokes its JWT
// sessions (a "not before" of at), all in one transaction (the rest goes
// by foreign key): a failure removes nothing. A gone user is ErrNotFound.
func (s *Store) DeleteUser(ctx context.Context, userID string, at time.Time) (Deleted, error) {
	var d Deleted
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var u User
		err := tx.Where("id = ?", userID).Take(&u).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("find user: %w", err)
		}
		if d.Sessions, err = revoke(tx, s.dialect, userID, at); err != nil {
			return err
		}
		r := tx.Where("user_id = ?", userID).Delete(&Account{})
		if r.Error != nil {
			return fmt.Errorf("delete accounts: %w", r.Error)
		}
		d.Accounts = r.RowsAffected
		addr := "" // its pending links: sign-in (by address), reset, e-mail change (models/accountstore)
		if u.Email != nil {
			addr = strings.ToLower(*u.Email)
		}
		from, to := IdentifiersFrom("email-change:" + userID + ":")
		r = tx.Where("identifier = ? OR identifier = ? OR (identifier >= ? AND identifier < ?)", addr, ResetPrefix+userID,
			from, to).Delete(&VerificationToken{})
		if r.Error != nil {
			return fmt.Errorf("delete verification tokens: %w", r.Error)
		}
		d.Tokens = r.RowsAffected
		if err := tx.Where("id = ?", userID).Delete(&User{}).Error; err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		return s.Emit(tx, events.Event{Type: events.UserDeleted, Data: events.Subject{UserID: userID, Actor: events.ActorOf(ctx)}})
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Deleted{}, err
		}
		return Deleted{}, fmt.Errorf("delete user: %w", err)
	}
	return d, nil
}

// UnlinkAccount removes the user's accounts at provider and returns how
// many there were (0: none, nothing changed). The user's sessions stay: the
// next OAuth sign-in with that provider links or creates a user as any
// first sign-in would.
func (s *Store) UnlinkAccount(ctx context.Context, userID, provider string) (int64, error) {
	return s.unlink(ctx, s.db.Where("user_id = ? AND provider = ?", userID, provider))
}

// UnlinkAccounts removes every account linked to the user, keeping the
// oldest one (the one the account began with or linked first) when
// without any the user could not sign in: otherWay gets the ways left but
// the identities. It decides under the user's row lock (RemoveSignInWay),
// so a passkey removed at the same moment is gone already or sees these
// identities go. It returns how many it removed and whether it kept one.
// Sessions stay, as with UnlinkAccount.
func (s *Store) UnlinkAccounts(ctx context.Context, userID string, otherWay func(left SignInWays) bool) (n int64, kept bool, err error) {
	err = s.RemoveSignInWay(ctx, userID, func(tx *gorm.DB, ways func() (SignInWays, error)) ([]events.Event, error) {
		w, err := ways()
		if err != nil {
			return nil, err
		}
		w.Accounts = 0
		q := tx.Where("user_id = ?", userID)
		if kept = !otherWay(w); kept {
			var oldest Account
			err := tx.Select("id").Where("user_id = ?", userID).Order("created_at, id").Take(&oldest).Error
			if errors.Is(err, gorm.ErrRecordNotFound) {
				kept = false
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("find the oldest account: %w", err)
			}
			q = q.Where("id <> ?", oldest.ID)
		}
		var evs []events.Event
		n, evs, err = deleteAccounts(ctx, q)
		return evs, err
	}, func(SignInWays) error { return nil })
	switch {
	case errors.Is(err, ErrNotFound): // no such user: nothing linked
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("unlink accounts: %w", err)
	}
	return n, kept, nil
}

// unlink deletes the accounts where picks, with an account.unlinked for each.
func (s *Store) unlink(ctx context.Context, where *gorm.DB) (int64, error) {
	var n int64
	err := s.Change(ctx, []string{events.AccountUnlink}, func(tx *gorm.DB) ([]events.Event, error) {
		var evs []events.Event
		var err error
		n, evs, err = deleteAccounts(ctx, tx.Where(where))
		return evs, err
	})
	if err != nil {
		return 0, fmt.Errorf("unlink accounts: %w", err)
	}
	return n, nil
}

// deleteAccounts deletes the accounts q picks and returns how many, with an
// account.unlinked event for each.
func deleteAccounts(ctx context.Context, q *gorm.DB) (int64, []events.Event, error) {
	var gone []Account
	r := q.Clauses(clause.Returning{Columns: []clause.Column{{Name: "user_id"}, {Name: "provider"}}}).Delete(&gone)
	if r.Error != nil {
		return 0, nil, r.Error
	}
	evs := make([]events.Event, 0, len(gone))
	for _, a := range gone {
		evs = append(evs, events.Event{Type: events.AccountUnlink, Data: events.Account{UserID: a.UserID, Provider: a.Provider, Actor: events.ActorOf(ctx)}})
	}
	return r.RowsAffected, evs, nil
}
