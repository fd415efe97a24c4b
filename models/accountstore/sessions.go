package accountstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/events"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// SessionRecord is a database session as the account page lists it. The
// caller marks the current one by TokenHash (the hash of its own cookie).
type SessionRecord struct {
	ID, TokenHash, Device, Network string
	// CreatedAt is the sign-in time (zero only after a hand edit).
	CreatedAt time.Time
	// LastSeen is the last extension (nil for sessions made before
	// schema step 9).
	LastSeen *time.Time
	Expires  time.Time
}

// SessionsOfUser returns the user's sessions that have not expired at now,
// newest sign-in first. The absolute lifetime is the caller's to apply: the
// store does not know it.
func (s *Store) SessionsOfUser(ctx context.Context, userID string, now time.Time) ([]SessionRecord, error) {
	var rows []models.Session
	err := s.db().WithContext(ctx).Select("id", "token_hash", "device", "network", "created_at", "last_seen", "expires").
		Where("user_id = ? AND expires > ?", userID, models.DBTime(now)).Order("created_at DESC, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list sessions of user: %w", err)
	}
	out := make([]SessionRecord, len(rows))
	for i, r := range rows {
		out[i] = SessionRecord{ID: r.ID, TokenHash: r.TokenHash, Device: r.Device, Network: r.Network,
			CreatedAt: r.CreatedAt, LastSeen: r.LastSeen, Expires: r.Expires}
	}
	return out, nil
}

// DeleteUserSession ends the session with id if it is userID's: false when
// there is no such session of this user (another user's id changes
// nothing). The owner check is in the DELETE itself, so no id read from a
// form can reach another user's row.
func (s *Store) DeleteUserSession(ctx context.Context, userID, id string) (bool, error) {
	var n int64
	err := s.store.Change(ctx, []string{events.SessionEnded}, func(tx *gorm.DB) ([]events.Event, error) {
		r := tx.Where("id = ? AND user_id = ?", id, userID).Delete(&models.Session{})
		if n = r.RowsAffected; r.Error != nil || n == 0 {
			return nil, r.Error
		}
		return ended(ctx, userID, id, models.StrategyDatabase, events.ScopeOne), nil
	})
	if err != nil {
		return false, fmt.Errorf("delete session of user: %w", err)
	}
	return n == 1, nil
}

// ended is the session.ended of the account page ending sessions
// (reason "revoked").
func ended(ctx context.Context, userID, id, strategy, scope string) []events.Event {
	return []events.Event{{Type: events.SessionEnded, Data: events.Session{UserID: userID, SessionID: id,
		Strategy: strategy, Scope: scope, Reason: events.ReasonRevoked, Actor: events.ActorOf(ctx)}}}
}

// DeleteOtherSessions ends every session of the user but the one stored
// under keepTokenHash (the caller's own) and returns how many went.
func (s *Store) DeleteOtherSessions(ctx context.Context, userID, keepTokenHash string) (int64, error) {
	var n int64
	err := s.store.Change(ctx, []string{events.SessionEnded}, func(tx *gorm.DB) ([]events.Event, error) {
		r := tx.Where("user_id = ? AND token_hash <> ?", userID, keepTokenHash).Delete(&models.Session{})
		if n = r.RowsAffected; r.Error != nil || n == 0 {
			return nil, r.Error
		}
		return ended(ctx, userID, "", models.StrategyDatabase, events.ScopeOthers), nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete other sessions: %w", err)
	}
	return n, nil
}

// UnlinkAccount removes the linked identity accountID if it is userID's:
// false when it is not (another user's id changes nothing). keep gets the
// ways to sign in left, read in the same transaction under the user's row
// lock (models.Store.RemoveSignInWay, as a passkey's removal), and its
// error undoes the unlink: whether it was the last way in is the caller's
// rule, decided on what the database holds, not on a read before.
func (s *Store) UnlinkAccount(ctx context.Context, userID, accountID string, keep func(left models.SignInWays) error) (bool, error) {
	err := s.store.RemoveSignInWay(ctx, userID, func(tx *gorm.DB, _ func() (models.SignInWays, error)) ([]events.Event, error) {
		var gone []models.Account
		r := tx.Clauses(clause.Returning{Columns: []clause.Column{{Name: "provider"}}}).
			Where("id = ? AND user_id = ?", accountID, userID).Delete(&gone)
		if r.Error != nil {
			return nil, r.Error
		}
		if len(gone) == 0 {
			return nil, models.ErrNotFound
		}
		return []events.Event{{Type: events.AccountUnlink, Data: events.Account{UserID: userID, Provider: gone[0].Provider,
			Actor: events.ActorOf(ctx)}}}, nil
	}, keep)
	switch {
	case errors.Is(err, models.ErrNotFound): // not the user's (or no such user)
		return false, nil
	case err != nil:
		return false, fmt.Errorf("unlink account: %w", err)
	}
	return true, nil
}
