package models

import (
	"context"
	"fmt"
)

// Counts is the number of rows of each table: what an operator (and a
// test asserting that a refused request wrote nothing) looks at first.
type Counts struct {
	Users              int64
	Accounts           int64
	Sessions           int64
	VerificationTokens int64
	RateLimits         int64 // buckets of the e-mail rate limits not yet full again (or purged)
}

// Count counts the rows of every table.
func (s *Store) Count(ctx context.Context) (Counts, error) {
	var c Counts
	db := s.db.WithContext(ctx)
	for _, q := range []struct {
		model any
		n     *int64
	}{{&User{}, &c.Users}, {&Account{}, &c.Accounts}, {&Session{}, &c.Sessions}, {&VerificationToken{}, &c.VerificationTokens}, {&RateLimit{}, &c.RateLimits}} {
		if err := db.Model(q.model).Count(q.n).Error; err != nil {
			return c, fmt.Errorf("count rows: %w", err)
		}
	}
	return c, nil
}

// VerificationTokensFor returns the pending e-mail sign-ins of an address.
func (s *Store) VerificationTokensFor(ctx context.Context, identifier string) ([]VerificationToken, error) {
	var out []VerificationToken
	if err := s.db.WithContext(ctx).Where("identifier = ?", identifier).Order("expires").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list verification tokens: %w", err)
	}
	return out, nil
}

// RateLimits returns the rate-limit buckets, by name: what an operator
// (and a test checking that no address is stored) looks at.
func (s *Store) RateLimits(ctx context.Context) ([]RateLimit, error) {
	var out []RateLimit
	if err := s.db.WithContext(ctx).Order("bucket").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list rate limits: %w", err)
	}
	return out, nil
}
