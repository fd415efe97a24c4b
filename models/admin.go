package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// The queries behind the admin commands (`latchkey users|sessions|accounts
// ...`), which an operator runs against the database of live instances.

// FindUser finds a user by id or, failing that, by e-mail address
// (case-insensitively, as addresses are stored lower-cased).
func (s *Store) FindUser(ctx context.Context, ref string) (*User, error) {
	u, err := s.UserByID(ctx, ref)
	if errors.Is(err, ErrNotFound) && strings.Contains(ref, "@") {
		u, err = s.UserByEmail(ctx, ref)
	}
	return u, err
}

// UserOverview is one line of `latchkey users list`.
type UserOverview struct {
	User
	Providers []string // the providers of the user's linked accounts, in link order
	Sessions  int64    // unexpired database sessions
}

// UserOverviews lists every user, oldest first, with their linked
// providers and live database sessions: three queries, whatever the number
// of users.
func (s *Store) UserOverviews(ctx context.Context, now time.Time) ([]UserOverview, error) {
	db := s.db.WithContext(ctx)
	var users []User
	if err := db.Order("created_at, id").Find(&users).Error; err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	var links []struct{ UserID, Provider string }
	if err := db.Model(&Account{}).Select("user_id, provider").Order("created_at, id").Scan(&links).Error; err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	var counts []struct {
		UserID string
		N      int64
	}
	err := db.Model(&Session{}).Select("user_id, count(*) AS n").Where("expires > ?", dbTime(now)).
		Group("user_id").Scan(&counts).Error
	if err != nil {
		return nil, fmt.Errorf("count sessions: %w", err)
	}
	out := make([]UserOverview, len(users))
	at := make(map[string]*UserOverview, len(users))
	for i, u := range users {
		out[i] = UserOverview{User: u, Providers: []string{}}
		at[u.ID] = &out[i]
	}
	for _, l := range links {
		if o := at[l.UserID]; o != nil {
			o.Providers = append(o.Providers, l.Provider)
		}
	}
	for _, c := range counts {
		if o := at[c.UserID]; o != nil {
			o.Sessions = c.N
		}
	}
	return out, nil
}

// SessionListing is one database session as `latchkey sessions list`
// shows it: never its token or the token's hash.
type SessionListing struct {
	ID       string    `json:"id"`
	UserID   string    `json:"userId"`
	Email    *string   `json:"email"`
	SignedIn time.Time `json:"signedIn"`
	Expires  time.Time `json:"expires"`
}

// SessionListings returns the unexpired database sessions, of one user
// when userID is not empty, most recent sign-in first.
func (s *Store) SessionListings(ctx context.Context, userID string, now time.Time) ([]SessionListing, error) {
	q := s.db.WithContext(ctx).Table("sessions AS s").
		Select("s.id, s.user_id, u.email, s.created_at AS signed_in, s.expires").
		Joins("JOIN users u ON u.id = s.user_id").
		Where("s.expires > ?", dbTime(now))
	if userID != "" {
		q = q.Where("s.user_id = ?", userID)
	}
	var out []SessionListing
	if err := q.Order("s.created_at DESC, s.id").Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// PendingSignIns counts the unexpired e-mail sign-in links sent to address.
func (s *Store) PendingSignIns(ctx context.Context, address string, now time.Time) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&VerificationToken{}).
		Where("identifier = ? AND expires > ?", strings.ToLower(address), dbTime(now)).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count pending sign-ins: %w", err)
	}
	return n, nil
}

// RevokedAt is the user's own "not before" time (zero when none): sessions
// signed in before it have been revoked.
func (s *Store) RevokedAt(ctx context.Context, userID string) (time.Time, error) {
	var r SessionRevocation
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read revocation: %w", err)
	}
	return time.Unix(r.NotBefore, 0).UTC(), nil
}

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
		r = tx.Where("identifier = ? OR identifier = ? OR identifier LIKE ?", addr, resetPrefix+userID,
			"email-change:"+userID+":%").Delete(&VerificationToken{})
		if r.Error != nil {
			return fmt.Errorf("delete verification tokens: %w", r.Error)
		}
		d.Tokens = r.RowsAffected
		if err := tx.Where("id = ?", userID).Delete(&User{}).Error; err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		return nil
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
	r := s.db.WithContext(ctx).Where("user_id = ? AND provider = ?", userID, provider).Delete(&Account{})
	if r.Error != nil {
		return 0, fmt.Errorf("unlink account: %w", r.Error)
	}
	return r.RowsAffected, nil
}

// UnlinkAccounts removes every account linked to the user except the one
// with id keep ("": none) and returns how many it removed. Sessions stay,
// as with UnlinkAccount.
func (s *Store) UnlinkAccounts(ctx context.Context, userID, keep string) (int64, error) {
	q := s.db.WithContext(ctx).Where("user_id = ?", userID)
	if keep != "" {
		q = q.Where("id <> ?", keep)
	}
	r := q.Delete(&Account{})
	if r.Error != nil {
		return 0, fmt.Errorf("unlink accounts: %w", r.Error)
	}
	return r.RowsAffected, nil
}
