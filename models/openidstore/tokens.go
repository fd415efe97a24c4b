package openidstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Token kinds.
const (
	KindAccess  = "access"
	KindRefresh = "refresh"
)

// createTokens inserts access and refresh (when not nil) inside tx.
func createTokens(tx *gorm.DB, tokens ...*Token) error {
	for _, t := range tokens {
		if t == nil {
			continue
		}
		t.AuthTime = models.DBTime(t.AuthTime)
		t.Expires = models.DBTime(t.Expires)
		t.CreatedAt = dbTimeOrZero(t.CreatedAt)
		t.UsedAt = dbTimePtr(t.UsedAt)
		t.RevokedAt = dbTimePtr(t.RevokedAt)
		if err := tx.Omit("User").Create(t).Error; err != nil {
			return fmt.Errorf("insert %s token: %w", t.Kind, models.Conflict(err))
		}
	}
	return nil
}

// RotateRefresh marks the refresh token oldID used at now and writes the
// new pair, in one transaction. false, nothing written, when oldID was used
// or revoked already (or is unknown): the conditional UPDATE lets exactly
// one of several refreshes racing with one token win.
func (s *Store) RotateRefresh(ctx context.Context, oldID string, now time.Time, access, refresh *Token) (bool, error) {
	won, err := s.issue(ctx, func(tx *gorm.DB) *gorm.DB {
		return tx.Model(&Token{}).Where("id = ? AND used_at IS NULL AND revoked_at IS NULL", oldID).
			Update("used_at", models.DBTime(now))
	}, access, refresh)
	if err != nil {
		return false, fmt.Errorf("rotate refresh token: %w", err)
	}
	return won, nil
}

// issue runs claim, a conditional UPDATE of what the tokens are issued
// for (a code, a refresh token), and when it changed a row writes tokens,
// in one transaction: false, nothing written, when it changed none. Of
// several requests racing for one code or refresh token exactly one wins,
// and its tokens are there by the time a loser sees the claim.
func (s *Store) issue(ctx context.Context, claim func(tx *gorm.DB) *gorm.DB, tokens ...*Token) (bool, error) {
	var won bool
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := claim(tx)
		if r.Error != nil || r.RowsAffected == 0 {
			return r.Error
		}
		won = true
		return createTokens(tx, tokens...)
	})
	return won, err
}

// RefreshToken returns the refresh token whose hash is hash, whatever its
// state (used, revoked, expired: the caller decides); models.ErrNotFound.
func (s *Store) RefreshToken(ctx context.Context, hash string) (*Token, error) {
	return s.findToken(ctx, "token_hash = ? AND kind = ?", hash, KindRefresh)
}

// Token returns the token id, whatever its state; models.ErrNotFound.
func (s *Store) Token(ctx context.Context, id string) (*Token, error) {
	return s.findToken(ctx, "id = ?", id)
}

func (s *Store) findToken(ctx context.Context, cond string, args ...any) (*Token, error) {
	var t Token
	err := s.db().WithContext(ctx).Where(cond, args...).Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find token: %w", err)
	}
	return &t, nil
}

// RevokeToken revokes one token at now (no-op when revoked already or
// unknown).
func (s *Store) RevokeToken(ctx context.Context, id string, now time.Time) error {
	if _, err := s.revoke(ctx, now, "id = ?", id); err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

// RevokeFamily revokes every token of the family at now; it returns how
// many were still unrevoked.
func (s *Store) RevokeFamily(ctx context.Context, familyID string, now time.Time) (int64, error) {
	n, err := s.revoke(ctx, now, "family_id = ?", familyID)
	if err != nil {
		return 0, fmt.Errorf("revoke token family: %w", err)
	}
	return n, nil
}

// RevokeGrants revokes every token of userID for clientID ("" for every
// client) and ends the user's requests to it whose code is not exchanged
// yet (endRequests), at now, in one transaction; it returns how many
// tokens were still unrevoked.
func (s *Store) RevokeGrants(ctx context.Context, userID, clientID string, now time.Time) (int64, error) {
	var n int64
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		n, err = revokeGrant(tx, now, userID, clientID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("revoke grants: %w", err)
	}
	return n, nil
}

// revokeGrant revokes userID's tokens for clientID ("": every client) and
// ends the requests whose code they could still get, inside tx; it
// returns how many tokens were still unrevoked.
func revokeGrant(tx *gorm.DB, now time.Time, userID, clientID string) (int64, error) {
	cond, args := "user_id = ?", []any{userID}
	if clientID != "" {
		cond, args = "user_id = ? AND client_id = ?", []any{userID, clientID}
	}
	n, err := revokeTokens(tx, now, cond, args...)
	if err != nil {
		return 0, err
	}
	if _, err := endRequests(tx, now, cond, args...); err != nil {
		return 0, err
	}
	return n, nil
}

// revoke sets revoked_at = now on the unrevoked tokens matching cond.
func (s *Store) revoke(ctx context.Context, now time.Time, cond string, args ...any) (int64, error) {
	return revokeTokens(s.db().WithContext(ctx), now, cond, args...)
}

// revokeTokens is revoke on db (a transaction or not).
func revokeTokens(db *gorm.DB, now time.Time, cond string, args ...any) (int64, error) {
	r := db.Model(&Token{}).Where(cond, args...).Where("revoked_at IS NULL").
		Update("revoked_at", models.DBTime(now))
	return r.RowsAffected, r.Error
}

// RevokedNotBefore is the latest "not before" of userID's and everyone's
// (models.AllUsers) session revocations, from session_revocations (zero
// time: none).
func (s *Store) RevokedNotBefore(ctx context.Context, userID string) (time.Time, error) {
	var sec sql.NullInt64
	err := s.db().WithContext(ctx).Model(&models.SessionRevocation{}).
		Where("user_id IN ?", []string{userID, models.AllUsers}).
		Select("MAX(not_before)").Scan(&sec).Error
	if err != nil {
		return time.Time{}, fmt.Errorf("read session revocations: %w", err)
	}
	if !sec.Valid {
		return time.Time{}, nil
	}
	return time.Unix(sec.Int64, 0), nil
}
