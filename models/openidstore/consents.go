package openidstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Consent returns the user's consent to the client; models.ErrNotFound.
func (s *Store) Consent(ctx context.Context, userID, clientID string) (*Consent, error) {
	var c Consent
	err := s.db().WithContext(ctx).Where("user_id = ? AND client_id = ?", userID, clientID).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find consent: %w", err)
	}
	return &c, nil
}

// touchConsentSQL inserts the consent or, when there is one, touches its
// updated_at: either way the row exists afterwards and the transaction
// holds its lock (PostgreSQL's row lock; SQLite's write lock), so the
// union written next cannot lose a scope to a SaveConsent racing it.
const touchConsentSQL = `INSERT INTO oidc_consents (user_id, client_id, scopes, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (user_id, client_id) DO UPDATE SET updated_at = excluded.updated_at`

// SaveConsent records the user's consent to the client for scopes
// (space-separated) or widens the one there is: its scopes become the
// union, the ones granted before first, in their order, then the new ones,
// with no duplicates. updated_at is now (created_at too, for a new one).
func (s *Store) SaveConsent(ctx context.Context, userID, clientID, scopes string, now time.Time) error {
	at := models.DBTime(now)
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		scopes = union("", scopes)
		if err := tx.Exec(touchConsentSQL, userID, clientID, scopes, at, at).Error; err != nil {
			return err
		}
		var had string
		err := tx.Model(&Consent{}).Where("user_id = ? AND client_id = ?", userID, clientID).
			Select("scopes").Scan(&had).Error
		if err != nil {
			return err
		}
		if merged := union(had, scopes); merged != had {
			return tx.Model(&Consent{}).Where("user_id = ? AND client_id = ?", userID, clientID).
				UpdateColumn("scopes", merged).Error // updated_at: now, set above
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save consent: %w", err)
	}
	return nil
}

// union is the space-separated scopes of a, then those of b not in a,
// each once.
func union(a, b string) string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(strings.Fields(a), strings.Fields(b)...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// Consents lists the user's consents, newest (last updated) first.
func (s *Store) Consents(ctx context.Context, userID string) ([]Consent, error) {
	var out []Consent
	err := s.db().WithContext(ctx).Where("user_id = ?", userID).Order("updated_at DESC, client_id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list consents: %w", err)
	}
	return out, nil
}

// DeleteConsent forgets the user's consent to the client, revokes the
// user's tokens for the client and ends the user's requests to the client
// whose code is not exchanged yet (endRequests: a code handed out, or
// about to be, would otherwise still buy tokens), at now, in one
// transaction; false when there was no consent, and then nothing changes:
// the account page answers NotFound, which must not have revoked the tokens
// of a first-party client (it needs no consent, and is not listed).
func (s *Store) DeleteConsent(ctx context.Context, userID, clientID string, now time.Time) (bool, error) {
	var ok bool
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Where("user_id = ? AND client_id = ?", userID, clientID).Delete(&Consent{})
		if r.Error != nil {
			return r.Error
		}
		ok = r.RowsAffected == 1
		if !ok {
			return nil
		}
		_, err := revokeGrant(tx, now, userID, clientID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete consent: %w", err)
	}
	return ok, nil
}
