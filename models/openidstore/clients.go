package openidstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Client returns the stored client id; models.ErrNotFound.
func (s *Store) Client(ctx context.Context, id string) (*Client, error) {
	var c Client
	err := s.db().WithContext(ctx).Where("id = ?", id).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find client: %w", err)
	}
	return &c, nil
}

// Clients lists the stored clients, oldest first.
func (s *Store) Clients(ctx context.Context) ([]Client, error) {
	var out []Client
	if err := s.db().WithContext(ctx).Order("created_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	return out, nil
}

// AddClient stores a new client (CreatedAt and UpdatedAt are GORM's clock
// when zero). An id used already is models.ErrConflict, with an error that
// names the id.
func (s *Store) AddClient(ctx context.Context, c *Client) error {
	c.CreatedAt = dbTimeOrZero(c.CreatedAt)
	c.UpdatedAt = dbTimeOrZero(c.UpdatedAt)
	err := s.db().WithContext(ctx).Create(c).Error
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return fmt.Errorf("add client: client id %q %w", c.ID, models.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("add client %q: %w", c.ID, err)
	}
	return nil
}

// RotateClientSecret replaces the client's secret hash (updated_at now).
// With previousUntil after now, the hash it replaces stays accepted until
// then (and one kept by an earlier rotation is dropped); else none is.
// One statement: the hash kept is the one replaced, whatever ran before.
// False when there is no such client.
func (s *Store) RotateClientSecret(ctx context.Context, id, secretHash string, previousUntil, now time.Time) (bool, error) {
	set := noPreviousSecret()
	set["secret_hash"], set["updated_at"] = secretHash, models.DBTime(now)
	if previousUntil.After(now) {
		set["previous_secret_hash"] = gorm.Expr("secret_hash") // the row's value before this update
		set["previous_secret_until"] = models.DBTime(previousUntil)
	}
	r := s.db().WithContext(ctx).Model(&Client{}).Where("id = ?", id).Updates(set)
	if r.Error != nil {
		return false, fmt.Errorf("rotate client secret: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// noPreviousSecret is the columns of a client with no previous secret.
func noPreviousSecret() map[string]any {
	return map[string]any{"previous_secret_hash": "", "previous_secret_until": nil}
}

// EndPreviousSecret stops the secret a rotation kept (updated_at now);
// false when the client has none, ended or not (or there is no such
// client).
func (s *Store) EndPreviousSecret(ctx context.Context, id string, now time.Time) (bool, error) {
	set := noPreviousSecret()
	set["updated_at"] = models.DBTime(now)
	r := s.db().WithContext(ctx).Model(&Client{}).Where("id = ? AND previous_secret_until IS NOT NULL", id).Updates(set)
	if r.Error != nil {
		return false, fmt.Errorf("end previous client secret: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// RemoveClient deletes the stored client and, in the same transaction, its
// consents, its tokens and its auth requests; false, nothing deleted, when
// there is no such client (a client of config.yaml is not stored, and its
// grants are not this call's to delete).
func (s *Store) RemoveClient(ctx context.Context, id string) (bool, error) {
	var ok bool
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Where("id = ?", id).Delete(&Client{})
		if r.Error != nil || r.RowsAffected == 0 {
			return r.Error
		}
		ok = true
		for _, model := range []any{&Consent{}, &Token{}, &AuthRequest{}} {
			if err := tx.Where("client_id = ?", id).Delete(model).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("remove client: %w", err)
	}
	return ok, nil
}
