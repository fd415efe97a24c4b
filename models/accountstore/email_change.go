package accountstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
)

// An e-mail change link is a verification_tokens row, like the password
// flows' links (models/passwordstore), under the identifier
// emailChangePrefix + userID + ":" + the new address (lower-cased): the
// link carries only its token, and the row says whose address becomes
// what. User ids are UUIDs, so the first ":" after the prefix ends the id.
// An e-mail sign-in never finds these rows: the core hashes their tokens
// under a prefix of their own.
const emailChangePrefix = "email-change:"

// CreateEmailChange stores an e-mail change link's token: userID's address
// becomes newAddr (stored lower-cased) when it is opened before expires. A
// token hash stored already is models.ErrConflict.
func (s *Store) CreateEmailChange(ctx context.Context, userID, newAddr, tokenHash string, expires time.Time) error {
	if userID == "" || strings.Contains(userID, ":") {
		return fmt.Errorf("create e-mail change: bad user id %q", userID)
	}
	row := models.VerificationToken{Identifier: emailChangeID(userID, newAddr), TokenHash: tokenHash, Expires: models.DBTime(expires)}
	if err := s.db().WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("create e-mail change: %w", models.Conflict(err))
	}
	return nil
}

// DeleteEmailChange removes a change link of userID's that was never
// delivered (the mail failed), so it leaves nothing behind.
func (s *Store) DeleteEmailChange(ctx context.Context, userID, tokenHash string) error {
	from, to := changesOf(userID)
	err := s.db().WithContext(ctx).
		Where("token_hash = ? AND identifier >= ? AND identifier < ?", tokenHash, from, to).
		Delete(&models.VerificationToken{}).Error
	if err != nil {
		return fmt.Errorf("delete e-mail change: %w", err)
	}
	return nil
}

// DeleteEmailChanges removes every pending change link of userID's (inert
// ones too) and returns how many went: signing out everywhere and a
// password reset or change end them with the sessions, one of which may
// have started them.
func (s *Store) DeleteEmailChanges(ctx context.Context, userID string) (int64, error) {
	from, to := changesOf(userID)
	r := s.db().WithContext(ctx).Where("identifier >= ? AND identifier < ?", from, to).Delete(&models.VerificationToken{})
	if r.Error != nil {
		return 0, fmt.Errorf("delete e-mail changes: %w", r.Error)
	}
	return r.RowsAffected, nil
}

func emailChangeID(userID, addr string) string {
	return emailChangePrefix + userID + ":" + strings.ToLower(addr)
}

// changesOf is the range of userID's change rows' identifiers (an index
// range; a LIKE would read the whole table).
func changesOf(userID string) (from, to string) {
	return models.IdentifiersFrom(emailChangePrefix + userID + ":")
}

// parseEmailChange splits an e-mail change row's identifier; false when it
// is not one (a hand edit).
func parseEmailChange(identifier string) (userID, addr string, ok bool) {
	rest, ok := strings.CutPrefix(identifier, emailChangePrefix)
	if !ok {
		return "", "", false
	}
	userID, addr, ok = strings.Cut(rest, ":")
	return userID, addr, ok && userID != "" && addr != ""
}

// EmailChangeByHash finds a live e-mail change link without spending it
// (the confirm page shows the address before the POST applies it);
// unknown, spent and expired are models.ErrNotFound.
func (s *Store) EmailChangeByHash(ctx context.Context, tokenHash string, now time.Time) (userID, newAddr string, err error) {
	var ids []string
	err = s.db().WithContext(ctx).Model(&models.VerificationToken{}).
		Where("token_hash = ? AND identifier LIKE ? AND expires > ?", tokenHash, emailChangePrefix+"%", models.DBTime(now)).
		Pluck("identifier", &ids).Error
	if err != nil {
		return "", "", fmt.Errorf("find e-mail change: %w", err)
	}
	if len(ids) == 0 {
		return "", "", models.ErrNotFound
	}
	userID, newAddr, ok := parseEmailChange(ids[0])
	if !ok {
		return "", "", models.ErrNotFound
	}
	return userID, newAddr, nil
}

// ApplyEmailChange opens an e-mail change link, in one transaction: the
// token is spent by a conditional DELETE (of two requests at once on any
// instances, one gets the row; a replayed or expired link is
// models.ErrNotFound), the user's address becomes the new one, verified at
// now (the link proved it), and the user's other pending e-mail changes and
// password resets (mailed to the old address) go. An address another user
// holds is models.ErrConflict and nothing is written: the transaction rolls
// back, so the token is not spent (the user may try again once the address
// is free). That holds when the other user takes the address after the
// check too: the UPDATE then meets users' unique e-mail index. A user
// deleted since the link was mailed is models.ErrNotFound. oldAddr is ""
// when the user had none.
func (s *Store) ApplyEmailChange(ctx context.Context, tokenHash string, now time.Time) (userID, oldAddr, newAddr string, err error) {
	now = models.DBTime(now)
	err = s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var spent []string
		err := tx.Raw(`DELETE FROM verification_tokens WHERE token_hash = ? AND identifier LIKE ? AND expires > ?
			RETURNING identifier`, tokenHash, emailChangePrefix+"%", now).Scan(&spent).Error
		if err != nil {
			return fmt.Errorf("spend token: %w", err)
		}
		var ok bool
		if len(spent) == 1 {
			userID, newAddr, ok = parseEmailChange(spent[0])
		}
		if !ok {
			return models.ErrNotFound
		}
		var u models.User
		err = tx.Select("id", "email").Where("id = ?", userID).Take(&u).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return models.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("find user: %w", err)
		}
		if u.Email != nil {
			oldAddr = *u.Email
		}
		var taken int64
		err = tx.Model(&models.User{}).Where("email = ? AND id <> ?", newAddr, userID).Count(&taken).Error
		if err != nil {
			return fmt.Errorf("check address: %w", err)
		}
		if taken > 0 {
			return models.ErrConflict
		}
		err = tx.Model(&models.User{}).Where("id = ?", userID).
			Updates(map[string]any{"email": newAddr, "email_verified": now, "updated_at": now}).Error
		if err != nil {
			return fmt.Errorf("set address: %w", models.Conflict(err))
		}
		from, to := changesOf(userID)
		err = tx.Where("(identifier >= ? AND identifier < ?) OR identifier = ?", from, to, models.ResetPrefix+userID).
			Delete(&models.VerificationToken{}).Error
		if err != nil {
			return fmt.Errorf("spend pending links: %w", err)
		}
		if !s.store.Wants(events.UserUpdated) {
			return nil
		}
		if err := tx.Where("id = ?", userID).Take(&u).Error; err != nil {
			return fmt.Errorf("read user: %w", err)
		}
		return s.store.Emit(tx, events.Event{Type: events.UserUpdated, Data: events.UserChange{User: models.EventUser(&u),
			Changes: []string{"email", "email_verified"}}})
	})
	if err != nil {
		return "", "", "", fmt.Errorf("apply e-mail change: %w", err)
	}
	return userID, oldAddr, newAddr, nil
}
