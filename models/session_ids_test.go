package models

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// New sessions' keys are UUIDs v7: they sort in the order the sessions
// were created, so each insert lands on the last leaf of the primary-key
// index, not on a random page of millions (issue #36).
func TestSessionIDsFollowCreation(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "ids@example.com")
		for i := range 5 {
			require.NoError(t, s.CreateSession(ctx, NewSession{UserID: u.ID, TokenHash: fmt.Sprint("ids-", i), SignedIn: time.Now(), Expires: time.Now().Add(time.Hour)}))
			time.Sleep(2 * time.Millisecond) // v7 orders by the millisecond
		}
		var byCreation []string
		require.NoError(t, s.db.Raw("SELECT id FROM sessions WHERE user_id = ? ORDER BY token_hash", u.ID).Scan(&byCreation).Error)
		require.Len(t, byCreation, 5)
		require.True(t, slices.IsSorted(byCreation), "ids in creation order: %v", byCreation)
		for _, id := range byCreation {
			parsed, err := uuid.Parse(id)
			require.NoError(t, err)
			require.EqualValues(t, 7, parsed.Version(), id)
		}
	})
}
