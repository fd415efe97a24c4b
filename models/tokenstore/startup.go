package tokenstore

import (
	"context"
	"fmt"
)

// Unsettled lists, after the id after and by id, up to n accounts whose
// tokens the start-up step must still settle: those of a provider in keep
// holding a token that does not start with prefix (stored in the clear),
// and those of any other provider holding a token at all. Once settled,
// an account is never listed again, so the step is idempotent and a
// database with nothing to settle costs one query.
func (s *Store) Unsettled(ctx context.Context, keep []string, prefix, after string, n int) ([]Account, error) {
	plain := "(%[1]s IS NOT NULL AND substr(%[1]s, 1, ?) <> ?)"
	held := "access_token IS NOT NULL OR refresh_token IS NOT NULL OR id_token IS NOT NULL"
	unsealed := "(" + fmt.Sprintf(plain, "access_token") + " OR " + fmt.Sprintf(plain, "refresh_token") + " OR " + fmt.Sprintf(plain, "id_token") + ")"
	l := len(prefix)
	q := s.db().WithContext(ctx).Where("id > ?", after)
	if len(keep) == 0 {
		q = q.Where(held)
	} else {
		q = q.Where("(provider IN ? AND "+unsealed+") OR (provider NOT IN ? AND ("+held+"))",
			keep, l, prefix, l, prefix, l, prefix, keep)
	}
	var out []Account
	if err := q.Order("id").Limit(n).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list unsettled tokens: %w", err)
	}
	return out, nil
}
