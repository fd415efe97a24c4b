package models

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestRedeemVerificationTokenCreatesThenVerifies(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		if err := s.CreateVerificationToken(ctx, "a@example.com", "h1", now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		u, isNew, err := s.RedeemVerificationToken(ctx, "a@example.com", "h1", now)
		if err != nil || !isNew || u.Email == nil || *u.Email != "a@example.com" || u.EmailVerified == nil {
			t.Fatalf("first redeem: user %+v new %v err %v", u, isNew, err)
		}
		if _, _, err := s.RedeemVerificationToken(ctx, "a@example.com", "h1", now); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second redeem of the same token: err %v, want ErrNotFound", err)
		}

		later := now.Add(time.Minute)
		if err := s.CreateVerificationToken(ctx, "a@example.com", "h2", later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		u2, isNew, err := s.RedeemVerificationToken(ctx, "a@example.com", "h2", later)
		if err != nil || isNew || u2.ID != u.ID || !u2.EmailVerified.Equal(later) {
			t.Fatalf("redeem for an existing user: %+v new %v err %v", u2, isNew, err)
		}
	})
}

func TestRedeemVerificationTokenRejects(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		if err := s.CreateVerificationToken(ctx, "a@example.com", "live", now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateVerificationToken(ctx, "a@example.com", "old", now.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ name, id, hash string }{
			{"unknown hash", "a@example.com", "nope"},
			{"other identifier", "b@example.com", "live"},
			{"expired", "a@example.com", "old"},
		} {
			if _, _, err := s.RedeemVerificationToken(ctx, tc.id, tc.hash, now); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: err %v, want ErrNotFound", tc.name, err)
			}
		}
		// None of the failures consumed the live token, and no user was created.
		if _, err := s.VerificationTokenByHash(ctx, "live"); err != nil {
			t.Fatalf("live token gone after failed redemptions: %v", err)
		}
		if _, err := s.UserByEmail(ctx, "b@example.com"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a failed redemption created a user: %v", err)
		}
	})
}

// A failure after the delete (here: the e-mail's user cannot be created
// because the users table is gone) rolls the token back.
func TestRedeemVerificationTokenRollsBack(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		if err := s.CreateVerificationToken(ctx, "a@example.com", "h", now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if s.Dialect() == DialectSQLite { // SQLite refuses the rename while a foreign key names the table
			if err := s.db.Exec("PRAGMA foreign_keys = OFF").Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := s.db.Exec("ALTER TABLE users RENAME TO users_away").Error; err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.RedeemVerificationToken(ctx, "a@example.com", "h", now); err == nil || errors.Is(err, ErrNotFound) {
			t.Fatalf("redeem without a users table: err %v, want a storage error", err)
		}
		if _, err := s.VerificationTokenByHash(ctx, "h"); err != nil {
			t.Fatalf("token consumed although the transaction failed: %v", err)
		}
	})
}

// Many goroutines on two Store handles (two instances of latchkey) redeem
// one link at once: exactly one signs in, every other gets ErrNotFound, and
// one user exists afterwards.
func TestRedeemVerificationTokenConcurrent(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		handles := []*Store{connect(t, c), connect(t, c)}
		ctx := context.Background()
		now := time.Now()
		if err := handles[0].CreateVerificationToken(ctx, "a@example.com", "h", now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		const n = 16
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				<-start
				_, _, err := handles[i%2].RedeemVerificationToken(ctx, "a@example.com", "h", now)
				results <- err
			})
		}
		close(start)
		wg.Wait()
		close(results)
		won := 0
		for err := range results {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrNotFound):
				t.Errorf("unexpected error: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d redemptions succeeded, want exactly 1", won)
		}
		if n := count(t, handles[1], "users"); n != 1 {
			t.Fatalf("%d users after the race, want 1", n)
		}
	})
}

func TestDeleteAndPurgeVerificationTokens(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now()
		for _, h := range []string{"keep", "drop", "stale"} {
			exp := now.Add(time.Hour)
			if h == "stale" {
				exp = now.Add(-time.Hour)
			}
			if err := s.CreateVerificationToken(ctx, "a@example.com", h, exp); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CreateVerificationToken(ctx, "a@example.com", "keep", now.Add(time.Hour)); !errors.Is(err, ErrConflict) {
			t.Fatalf("duplicate token: err %v, want ErrConflict", err)
		}
		if err := s.DeleteVerificationToken(ctx, "a@example.com", "drop"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PurgeExpired(ctx, now); err != nil {
			t.Fatal(err)
		}
		for h, want := range map[string]bool{"keep": true, "drop": false, "stale": false} {
			_, err := s.VerificationTokenByHash(ctx, h)
			if got := err == nil; got != want {
				t.Errorf("token %q present = %v, want %v (err %v)", h, got, want, err)
			}
		}
	})
}

// Two links for one new address, redeemed at the same moment through two
// instances: both sign in, into one user, created once.
func TestRedeemTwoLinksForNewAddressConcurrently(t *testing.T) {
	eachDialect(t, func(t *testing.T, c Config) {
		a, b := connect(t, c), connect(t, c)
		ctx := context.Background()
		now := time.Now()
		for round := range 20 {
			addr := fmt.Sprintf("new%d@example.com", round)
			for _, h := range []string{"1", "2"} {
				if err := a.CreateVerificationToken(ctx, addr, addr+h, now.Add(time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			type result struct {
				u     *User
				isNew bool
				err   error
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			results := make([]result, 2)
			for i, s := range []*Store{a, b} {
				wg.Go(func() {
					<-start
					u, isNew, err := s.RedeemVerificationToken(ctx, addr, addr+fmt.Sprint(i+1), now)
					results[i] = result{u, isNew, err}
				})
			}
			close(start)
			wg.Wait()
			for i, r := range results {
				if r.err != nil {
					t.Fatalf("round %d: redemption %d failed: %v", round, i+1, r.err)
				}
			}
			if results[0].u.ID != results[1].u.ID || results[0].isNew == results[1].isNew {
				t.Fatalf("round %d: users %s (new %v) and %s (new %v), want one user created once",
					round, results[0].u.ID, results[0].isNew, results[1].u.ID, results[1].isNew)
			}
		}
	})
}
