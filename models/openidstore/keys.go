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
	out, err := publishedKeys(s.db().WithContext(ctx), now)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	return out, nil
}

// publishedKeys is SigningKeys on tx.
func publishedKeys(tx *gorm.DB, now time.Time) ([]SigningKey, error) {
	var out []SigningKey
	err := tx.Where("published_until IS NULL OR published_until > ?", models.DBTime(now)).
		Order("created_at, id").Find(&out).Error
	return out, err
}

// FirstKeys adds keys only if no key is published at now, and returns the
// keys published then (SigningKeys): of instances that find no key at the
// same moment (a fresh deployment's first requests), the first to get
// here stores its keys and every other one gets and signs with those.
// RotateKeys there retired the keys another instance had just stored and
// was signing with. The check and the insert are serialised: on
// PostgreSQL by a lock on the table that plain reads do not wait for (a
// RotateKeys waits for it too), on SQLite by the write lock its
// transactions take at BEGIN.
func (s *Store) FirstKeys(ctx context.Context, keys []SigningKey, now time.Time) ([]SigningKey, error) {
	var out []SigningKey
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.store.Dialect() == models.DialectPostgres {
			if err := tx.Exec("LOCK TABLE oidc_signing_keys IN SHARE ROW EXCLUSIVE MODE").Error; err != nil {
				return fmt.Errorf("lock signing keys: %w", err)
			}
		}
		var err error
		if out, err = publishedKeys(tx, now); err != nil || len(out) > 0 || len(keys) == 0 {
			return err
		}
		for i := range keys {
			keys[i].CreatedAt = dbTimeOrZero(keys[i].CreatedAt)
			keys[i].ActiveFrom = models.DBTime(keys[i].ActiveFrom)
			keys[i].PublishedUntil = dbTimePtr(keys[i].PublishedUntil)
		}
		if err := tx.Create(&keys).Error; err != nil {
			return fmt.Errorf("insert keys: %w", models.Conflict(err))
		}
		out, err = publishedKeys(tx, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store first signing keys: %w", err)
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
