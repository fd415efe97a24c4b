package groupstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var gNow = time.Date(2031, 5, 6, 7, 8, 9, 123456000, time.UTC)

// Memberships on both dialects: added once (a second add changes
// nothing), listed sorted in byte order whatever the collation, removed
// once, counted per group; another user's rows are untouched.
func TestMemberships(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := newUser(t, s, "ann@example.com"), newUser(t, s, "bob@example.com")

		got, err := s.Groups(ctx, ann.ID)
		require.NoError(t, err)
		require.Empty(t, got)

		// Byte order: upper case before lower, punctuation by its code
		// (a PostgreSQL locale collation would put them elsewhere).
		for _, g := range []string{"staff", "Admins", "ops:oncall", "a.b", "a-b", "a_b"} {
			added, err := s.Add(ctx, ann.ID, g, gNow)
			require.NoError(t, err)
			require.True(t, added, g)
		}
		added, err := s.Add(ctx, ann.ID, "staff", gNow.Add(time.Hour))
		require.NoError(t, err)
		require.False(t, added, "already a member")
		added, err = s.Add(ctx, bob.ID, "staff", gNow)
		require.NoError(t, err)
		require.True(t, added)

		got, err = s.Groups(ctx, ann.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"Admins", "a-b", "a.b", "a_b", "ops:oncall", "staff"}, got)
		got, err = s.Groups(ctx, bob.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"staff"}, got)

		counts, err := s.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, []GroupCount{{"Admins", 1}, {"a-b", 1}, {"a.b", 1}, {"a_b", 1}, {"ops:oncall", 1}, {"staff", 2}}, counts)

		removed, err := s.Remove(ctx, ann.ID, "staff")
		require.NoError(t, err)
		require.True(t, removed)
		removed, err = s.Remove(ctx, ann.ID, "staff")
		require.NoError(t, err)
		require.False(t, removed, "not a member any more")
		removed, err = s.Remove(ctx, ann.ID, "STAFF")
		require.NoError(t, err)
		require.False(t, removed, "names are case-sensitive")
		got, err = s.Groups(ctx, bob.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"staff"}, got, "another user's membership stays")

		var m Membership
		require.NoError(t, s.db().Where("user_id = ? AND name = ?", bob.ID, "staff").Take(&m).Error)
		require.True(t, m.CreatedAt.Equal(gNow.Truncate(time.Microsecond)), "created_at %s", m.CreatedAt)

		_, err = s.Add(ctx, "no-such-user", "staff", gNow)
		require.Error(t, err, "a membership needs its user")
	})
}

// Deleting a user deletes its memberships (ON DELETE CASCADE), on both
// dialects, and only its own.
func TestMembershipsGoWithTheirUser(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := newUser(t, s, "ann@example.com"), newUser(t, s, "bob@example.com")
		for _, u := range []string{ann.ID, bob.ID} {
			for _, g := range []string{"staff", "ops"} {
				_, err := s.Add(ctx, u, g, gNow)
				require.NoError(t, err)
			}
		}
		_, err := s.store.DeleteUser(ctx, ann.ID, gNow)
		require.NoError(t, err)
		require.Equal(t, int64(2), count(t, s, "user_groups"))
		got, err := s.Groups(ctx, bob.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"ops", "staff"}, got)
	})
}
