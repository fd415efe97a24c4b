package openidstore

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// SigningKeys returns the keys still published at now (published_until
// NULL or after now), oldest first (created_at, then id).
func (s *Store) SigningKeys(ctx context.Context, now time.Time) ([]SigningKey, error) {
	var out []SigningKey
	err := s.db().WithContext(ctx).Where("published_until IS NULL OR published_until > ?", models.DBTime(now)).
		Order("created_at, id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	return out, nil
}

// RotateKeys adds keys and, in the same transaction and before adding
// them, sets published_until = retireAt on every stored key of each of
// their algorithms that had none. With no key yet it just adds. Times are
// stored at models.DBTime's precision (CreatedAt: GORM's clock when zero).
func (s *Store) RotateKeys(ctx context.Context, keys []SigningKey, retireAt time.Time) error {
	if len(keys) == 0 {
		return nil
	}
	until := models.DBTime(retireAt)
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		done := map[string]bool{}
		for i := range keys {
			k := &keys[i]
			if !done[k.Algorithm] {
				done[k.Algorithm] = true
				err := tx.Model(&SigningKey{}).Where("algorithm = ? AND published_until IS NULL", k.Algorithm).
					Update("published_until", until).Error
				if err != nil {
					return fmt.Errorf("retire %s keys: %w", k.Algorithm, err)
				}
			}
			k.CreatedAt = dbTimeOrZero(k.CreatedAt)
			k.ActiveFrom = models.DBTime(k.ActiveFrom)
			k.PublishedUntil = dbTimePtr(k.PublishedUntil)
		}
		if err := tx.Create(&keys).Error; err != nil {
			return fmt.Errorf("insert keys: %w", models.Conflict(err))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rotate signing keys: %w", err)
	}
	return nil
}
