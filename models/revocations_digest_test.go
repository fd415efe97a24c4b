package models

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The poll's digest of session_revocations changes with every insert,
// every forward move of a not-before time and every purge, and not
// otherwise (app/revocations.go reads the rows only when it changed).
func TestRevocationsDigest(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
		digest := func() RevocationDigest {
			d, err := s.RevocationsDigest(ctx)
			require.NoError(t, err)
			return d
		}
		require.Equal(t, RevocationDigest{}, digest())
		ann, bob := newUser(t, s, "ann@example.com"), newUser(t, s, "bob@example.com")
		_, err := s.RevokeSessions(ctx, ann.ID, at)
		require.NoError(t, err)
		one := digest()
		require.EqualValues(t, 1, one.Rows)
		require.Equal(t, one, digest(), "unchanged table, same digest")

		_, err = s.RevokeSessions(ctx, ann.ID, at.Add(time.Minute))
		require.NoError(t, err)
		moved := digest()
		require.EqualValues(t, 1, moved.Rows)
		require.NotEqual(t, one, moved, "a not-before moved forward")

		_, err = s.RevokeSessions(ctx, bob.ID, at.Add(48*time.Hour))
		require.NoError(t, err)
		two := digest()
		require.EqualValues(t, 2, two.Rows)
		_, err = s.PurgeRevocations(ctx, at.Add(24*time.Hour))
		require.NoError(t, err)
		purged := digest()
		require.EqualValues(t, 1, purged.Rows)
		require.NotEqual(t, two, purged)
	})
}
