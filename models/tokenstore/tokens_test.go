package tokenstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/storetest"
)

func account(t *testing.T, s *Store) *Account {
	t.Helper()
	u := storetest.NewUser(t, s.store, "")
	require.NoError(t, s.store.LinkAccount(context.Background(), &models.Account{UserID: u.ID, Type: "oidc", Provider: "idp", ProviderAccountID: u.ID}))
	a, err := s.Account(context.Background(), u.ID, "idp")
	require.NoError(t, err)
	return a
}

// Of many takers racing for one account's lease, on separate connections
// as separate instances would be, exactly one wins; the lease is free
// again once ended, or once expired.
func TestLeaseHasOneHolder(t *testing.T) {
	storetest.EachDialect(t, postgresURL, func(t *testing.T, c models.Config) {
		s := New(storetest.Connect(t, c))
		others := []*Store{s, New(storetest.Connect(t, c)), New(storetest.Connect(t, c))}
		acc := account(t, s)
		ctx, now := context.Background(), time.Now()
		var won atomic.Int64
		var wg sync.WaitGroup
		for i := range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := others[i%3].TakeLease(ctx, acc.ID, string(rune('a'+i)), now, now.Add(time.Minute))
				if err == nil && ok {
					won.Add(1)
				}
			}()
		}
		wg.Wait()
		require.EqualValues(t, 1, won.Load())
		held, err := s.Account(ctx, acc.UserID, "idp")
		require.NoError(t, err)
		owner := *held.RefreshLeaseOwner

		ok, err := s.TakeLease(ctx, acc.ID, "late", now, now.Add(time.Minute))
		require.NoError(t, err)
		require.False(t, ok)
		saved, err := s.SaveRefreshed(ctx, acc.ID, "not-the-holder", Sealed{})
		require.NoError(t, err)
		require.False(t, saved, "only the holder saves")
		ok, err = s.TakeLease(ctx, acc.ID, "after-expiry", now.Add(2*time.Minute), now.Add(3*time.Minute))
		require.NoError(t, err)
		require.True(t, ok, "an expired lease (its holder died) is taken over")
		require.NoError(t, s.EndLease(ctx, acc.ID, owner, "")) // the old holder ends nothing
		ok, err = s.TakeLease(ctx, acc.ID, "x", now.Add(2*time.Minute), now.Add(3*time.Minute))
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, s.EndLease(ctx, acc.ID, "after-expiry", "RefreshAccessTokenError"))
		mark, err := s.TokenError(ctx, acc.UserID)
		require.NoError(t, err)
		require.Equal(t, "RefreshAccessTokenError", mark)
		ok, err = s.TakeLease(ctx, acc.ID, "x", now, now.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, ok)
	})
}
