package twofactorstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// CreateSecondStep stores a sign-in waiting for its second factor. Its
// times are stored at dbTime's precision (CreatedAt is GORM's clock when
// zero); a token hash stored already is models.ErrConflict.
func (s *Store) CreateSecondStep(ctx context.Context, st *SecondStep) error {
	st.Expires = models.DBTime(st.Expires)
	if !st.CreatedAt.IsZero() {
		st.CreatedAt = models.DBTime(st.CreatedAt)
	}
	if err := s.db().WithContext(ctx).Omit("User").Create(st).Error; err != nil {
		return fmt.Errorf("create second step: %w", models.Conflict(err))
	}
	return nil
}

// SecondStepByHash finds a pending second step by its token's hash;
// models.ErrNotFound when there is none. An expired row is returned as it is
// (until purged): the caller compares Expires with its own clock.
func (s *Store) SecondStepByHash(ctx context.Context, tokenHash string) (*SecondStep, error) {
	var st SecondStep
	err := s.db().WithContext(ctx).Where("token_hash = ?", tokenHash).Take(&st).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find second step: %w", err)
	}
	return &st, nil
}

// CountSecondStepAttempt counts one code tried on the step, if the step
// has attempts left (fewer than max) and has not expired at now. false
// when not: the caller refuses the attempt without checking the code. One
// conditional UPDATE, so requests in parallel on any instances get at
// most max trues between them.
func (s *Store) CountSecondStepAttempt(ctx context.Context, tokenHash string, max int, now time.Time) (bool, error) {
	r := s.db().WithContext(ctx).Model(&SecondStep{}).
		Where("token_hash = ? AND attempts < ? AND expires > ?", tokenHash, max, models.DBTime(now)).
		UpdateColumn("attempts", gorm.Expr("attempts + 1"))
	if r.Error != nil {
		return false, fmt.Errorf("count second-step attempt: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// ConsumeSecondStep deletes the step once its second factor passed: the
// request whose DELETE removed the row (true) makes the session; false
// when it was gone, because another request used it or it was purged.
func (s *Store) ConsumeSecondStep(ctx context.Context, tokenHash string) (bool, error) {
	r := s.db().WithContext(ctx).Where("token_hash = ?", tokenHash).Delete(&SecondStep{})
	if r.Error != nil {
		return false, fmt.Errorf("consume second step: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// DeleteSecondStepsOf ends every pending second step of the user (a
// password reset or change, signing out everywhere): a first factor
// passed before it must not finish later. Steps whose user has no
// two-factor row (pending enrolments) go too.
func (s *Store) DeleteSecondStepsOf(ctx context.Context, userID string) error {
	if err := s.db().WithContext(ctx).Where("user_id = ?", userID).Delete(&SecondStep{}).Error; err != nil {
		return fmt.Errorf("delete the user's second steps: %w", err)
	}
	return nil
}
