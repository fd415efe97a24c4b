package tokenstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
)

// Several instances serve one database and a provider refresh token may
// be spent at most once: every write that decides something is one
// conditional UPDATE whose RowsAffected says whether it won.

// accountOrder is which of a user's accounts at one provider Account
// answers, when the user linked several identities there (two GitHub
// logins): of those whose token can be served (kept, not marked), the
// earliest linked; when none can, the earliest linked, whose error the
// caller answers. Without an order the database picked any row, not
// always the same, so GET /token could switch identities between calls,
// and a refresh could read another row than the lease it ran under.
const accountOrder = "CASE WHEN token_error IS NULL AND access_token IS NOT NULL THEN 0 ELSE 1 END, created_at, id"

// Account returns the user's account at provider (accountOrder picks one
// of several); models.ErrNotFound when the user has none.
func (s *Store) Account(ctx context.Context, userID, provider string) (*Account, error) {
	return s.take(s.db().WithContext(ctx).Where("user_id = ? AND provider = ?", userID, provider).Order(accountOrder), "account")
}

// AccountByID returns one account: the one whose refresh lease a request
// took, which the refresh must read and write, whatever Account would
// pick by then. models.ErrNotFound when it is gone (unlinked).
func (s *Store) AccountByID(ctx context.Context, id string) (*Account, error) {
	return s.take(s.db().WithContext(ctx).Where("id = ?", id), "account by id")
}

// AccountByIdentity returns the account of one provider identity;
// models.ErrNotFound when none is linked.
func (s *Store) AccountByIdentity(ctx context.Context, provider, providerAccountID string) (*Account, error) {
	return s.take(s.db().WithContext(ctx).Where("provider = ? AND provider_account_id = ?", provider, providerAccountID), "account by identity")
}

func (s *Store) take(q *gorm.DB, what string) (*Account, error) {
	var a Account
	err := q.Take(&a).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", what, err)
	}
	return &a, nil
}

// AccountsOf lists the user's accounts, by provider (the admin's view).
func (s *Store) AccountsOf(ctx context.Context, userID string) ([]Account, error) {
	var out []Account
	if err := s.db().WithContext(ctx).Where("user_id = ?", userID).Order("provider, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	return out, nil
}

// TakeLease makes owner the account's refresher until until, unless
// another holds an unexpired lease (false). A lease outlives the provider
// call it covers, so it expires only when its holder died.
func (s *Store) TakeLease(ctx context.Context, id, owner string, now, until time.Time) (bool, error) {
	r := s.db().WithContext(ctx).Model(&Account{}).
		Where("id = ? AND (refresh_lease_until IS NULL OR refresh_lease_until < ?)", id, now.UnixMilli()).
		Updates(map[string]any{"refresh_lease_owner": owner, "refresh_lease_until": until.UnixMilli()})
	if r.Error != nil {
		return false, fmt.Errorf("take refresh lease: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// SaveRefreshed writes the refreshed tokens (the rotated refresh token
// with them) and ends owner's lease, in one statement; false when owner
// no longer held it (nothing written).
func (s *Store) SaveRefreshed(ctx context.Context, id, owner string, t Sealed) (bool, error) {
	cols := t.columns()
	cols["refresh_lease_owner"], cols["refresh_lease_until"] = nil, nil
	r := s.db().WithContext(ctx).Model(&Account{}).Where("id = ? AND refresh_lease_owner = ?", id, owner).Updates(cols)
	if r.Error != nil {
		return false, fmt.Errorf("save refreshed tokens: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// EndLease ends owner's lease; mark, when not empty, marks the account
// (the provider refused its refresh token) in the same statement.
func (s *Store) EndLease(ctx context.Context, id, owner, mark string) error {
	cols := map[string]any{"refresh_lease_owner": nil, "refresh_lease_until": nil}
	if mark != "" {
		cols["token_error"] = mark
	}
	if err := s.db().WithContext(ctx).Model(&Account{}).Where("id = ? AND refresh_lease_owner = ?", id, owner).Updates(cols).Error; err != nil {
		return fmt.Errorf("end refresh lease: %w", err)
	}
	return nil
}

// Keep writes the tokens of a new sign-in with the provider, clearing the
// mark (the user signed in again) and any lease.
func (s *Store) Keep(ctx context.Context, id string, t Sealed) error {
	cols := t.columns()
	cols["token_error"], cols["refresh_lease_owner"], cols["refresh_lease_until"] = nil, nil, nil
	if err := s.db().WithContext(ctx).Model(&Account{}).Where("id = ?", id).Updates(cols).Error; err != nil {
		return fmt.Errorf("keep tokens: %w", err)
	}
	return nil
}

// Replace writes next over the account's three tokens if they still are
// old (false: another writer came first, nothing written): re-sealing
// under the newest secret, and the start-up step.
func (s *Store) Replace(ctx context.Context, id string, old, next Sealed) (bool, error) {
	q := s.db().WithContext(ctx).Model(&Account{}).Where("id = ?", id)
	for col, v := range map[string]*string{"access_token": old.AccessToken, "refresh_token": old.RefreshToken, "id_token": old.IDToken} {
		if v == nil {
			q = q.Where(col + " IS NULL")
		} else {
			q = q.Where(col+" = ?", *v)
		}
	}
	r := q.Updates(map[string]any{"access_token": next.AccessToken, "refresh_token": next.RefreshToken, "id_token": next.IDToken})
	if r.Error != nil {
		return false, fmt.Errorf("replace tokens: %w", r.Error)
	}
	return r.RowsAffected == 1, nil
}

// TokenError is the mark of one of the user's accounts ("" when none is
// marked): what GET /session reports.
func (s *Store) TokenError(ctx context.Context, userID string) (string, error) {
	var marks []string
	err := s.db().WithContext(ctx).Model(&Account{}).Where("user_id = ? AND token_error IS NOT NULL", userID).
		Limit(1).Pluck("token_error", &marks).Error
	if err != nil {
		return "", fmt.Errorf("read token error: %w", err)
	}
	if len(marks) == 0 {
		return "", nil
	}
	return marks[0], nil
}
