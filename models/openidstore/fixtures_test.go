package openidstore

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// CreateTokens writes tokens (refresh may be nil) in one transaction: the
// tests' fixture. The service writes tokens only with what issues them
// (ExchangeCode, RotateRefresh).
func (s *Store) CreateTokens(ctx context.Context, access, refresh *Token) error {
	err := s.db().WithContext(ctx).Transaction(func(tx *gorm.DB) error { return createTokens(tx, access, refresh) })
	if err != nil {
		return fmt.Errorf("create tokens: %w", err)
	}
	return nil
}
