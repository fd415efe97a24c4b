package openidstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// CreateAuthRequest stores a new authorization request. Its times are
// stored at models.DBTime's precision (CreatedAt is GORM's clock when
// zero); an id or code hash stored already is models.ErrConflict.
func (s *Store) CreateAuthRequest(ctx context.Context, r *AuthRequest) error {
	r.Expires = models.DBTime(r.Expires)
	r.CreatedAt = dbTimeOrZero(r.CreatedAt)
	r.AuthTime = dbTimePtr(r.AuthTime)
	r.DoneAt = dbTimePtr(r.DoneAt)
	r.LoginAskedAt = dbTimePtr(r.LoginAskedAt)
	r.ExchangedAt = dbTimePtr(r.ExchangedAt)
	if err := s.db().WithContext(ctx).Create(r).Error; err != nil {
		return fmt.Errorf("create auth request: %w", models.Conflict(err))
	}
	return nil
}

// AuthRequest returns the request id if it has not expired at now
// (expires > now); models.ErrNotFound otherwise.
func (s *Store) AuthRequest(ctx context.Context, id string, now time.Time) (*AuthRequest, error) {
	return s.findAuthRequest(ctx, "id = ?", id, now)
}

// AuthRequestByCode returns the unexpired request whose code hashes to
// codeHash, exchanged or not; models.ErrNotFound otherwise.
func (s *Store) AuthRequestByCode(ctx context.Context, codeHash string, now time.Time) (*AuthRequest, error) {
	return s.findAuthRequest(ctx, "code_hash = ?", codeHash, now)
}

func (s *Store) findAuthRequest(ctx context.Context, cond string, arg string, now time.Time) (*AuthRequest, error) {
	var r AuthRequest
	err := s.db().WithContext(ctx).Where(cond+" AND expires > ?", arg, models.DBTime(now)).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find auth request: %w", err)
	}
	return &r, nil
}

// AskedLogin records that the request sent the browser to sign in again
// at at (an unknown id changes nothing and is no error).
func (s *Store) AskedLogin(ctx context.Context, id string, at time.Time) error {
	err := s.db().WithContext(ctx).Model(&AuthRequest{}).Where("id = ?", id).
		Update("login_asked_at", models.DBTime(at)).Error
	if err != nil {
		return fmt.Errorf("record login asked: %w", err)
	}
	return nil
}

// CompleteAuthRequest records who completed the request and how they
// signed in (done_at now). false, nothing written, when the request is
// unknown, expired at now or completed already: one conditional UPDATE, so
// of two completions racing one wins.
func (s *Store) CompleteAuthRequest(ctx context.Context, id, userID string, authTime time.Time, amr string, now time.Time) (bool, error) {
	at := models.DBTime(now)
	r := s.db().WithContext(ctx).Model(&AuthRequest{}).
		Where("id = ? AND expires > ? AND done_at IS NULL", id, at).
		Updates(map[string]any{"user_id": userID, "auth_time": models.DBTime(authTime), "amr": amr,
			"done_at": at})
	if r.Error != nil {
		return false, fmt.Errorf("complete auth request: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// EndAuthRequest ends the request id (expires = now) if it is not
// completed: false, nothing written, when it is unknown, expired or
// completed already — one conditional UPDATE, so of an ending and a
// completion racing one wins.
func (s *Store) EndAuthRequest(ctx context.Context, id string, now time.Time) (bool, error) {
	n, err := endRequests(s.db().WithContext(ctx), now, "id = ? AND done_at IS NULL", id)
	if err != nil {
		return false, fmt.Errorf("end auth request: %w", err)
	}
	return n == 1, nil
}

// SaveCode stores the hash of the code handed out for the completed
// request id. false, nothing written, when the request is unknown, not
// completed, or has a code already (a code is issued once, whichever of
// two racing callers wins). A code hash another request holds is
// models.ErrConflict.
func (s *Store) SaveCode(ctx context.Context, id, codeHash string) (bool, error) {
	r := s.db().WithContext(ctx).Model(&AuthRequest{}).
		Where("id = ? AND done_at IS NOT NULL AND code_hash IS NULL", id).
		Update("code_hash", codeHash)
	if r.Error != nil {
		return false, fmt.Errorf("save code: %w", models.Conflict(r.Error))
	}
	return r.RowsAffected == 1, nil
}

// ExchangeCode marks the request's code exchanged at now and writes the
// tokens it issues (refresh may be nil), in one transaction. false,
// nothing written, when it was exchanged already (a reuse) or the request
// has no code (or is unknown): of several exchanges racing, exactly one
// wins, and a loser that goes on to revoke the winner's family (the
// reuse) finds the tokens there — with the claim and the tokens in two
// transactions it could come between them and revoke an empty family.
// A request that expired (or was ended: EndAuthRequest, DeleteConsent,
// RevokeGrants) since the caller read it is not exchanged either, so a
// grant revoked while its code was being exchanged leaves no token.
func (s *Store) ExchangeCode(ctx context.Context, id string, now time.Time, access, refresh *Token) (bool, error) {
	at := models.DBTime(now)
	won, err := s.issue(ctx, func(tx *gorm.DB) *gorm.DB {
		return tx.Model(&AuthRequest{}).Where("id = ? AND code_hash IS NOT NULL AND exchanged_at IS NULL AND expires > ?", id, at).
			Update("exchanged_at", at)
	}, access, refresh)
	if err != nil {
		return false, fmt.Errorf("exchange code: %w", err)
	}
	return won, nil
}

// endRequests ends the unexpired requests matching cond whose code was not
// exchanged (expires = now): none of them is completed, given a code or
// exchanged after. An exchanged one stays, to tell its reused code from
// an unknown one. db is a transaction or not.
func endRequests(db *gorm.DB, now time.Time, cond string, args ...any) (int64, error) {
	at := models.DBTime(now)
	r := db.Model(&AuthRequest{}).Where(cond, args...).Where("exchanged_at IS NULL AND expires > ?", at).
		Update("expires", at)
	return r.RowsAffected, r.Error
}
