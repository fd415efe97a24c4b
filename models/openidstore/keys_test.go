package openidstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

func key(id, alg string, created time.Time) SigningKey {
	return SigningKey{ID: id, Algorithm: alg, PublicJWK: `{"kid":"` + id + `"}`, PrivateKey: "sealed-" + id,
		CreatedAt: created, ActiveFrom: created.Add(time.Minute)}
}

func keyIDs(keys []SigningKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.ID
	}
	return out
}

func TestSigningKeys(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		keys, err := s.SigningKeys(ctx, now)
		require.NoError(t, err)
		require.Empty(t, keys)

		retire1 := now.Add(24 * time.Hour)
		require.NoError(t, s.RotateKeys(ctx, []SigningKey{key("rs-1", "RS256", now), key("es-1", "ES256", now)}, retire1))
		keys, err = s.SigningKeys(ctx, now)
		require.NoError(t, err)
		require.Equal(t, []string{"es-1", "rs-1"}, keyIDs(keys), "same created_at: by id")
		for _, k := range keys {
			require.Nil(t, k.PublishedUntil, "the first keys retire nothing")
		}
		require.Equal(t, "sealed-es-1", keys[0].PrivateKey)
		require.Equal(t, `{"kid":"es-1"}`, keys[0].PublicJWK)
		require.True(t, keys[0].ActiveFrom.Equal(models.DBTime(now.Add(time.Minute))))

		// A new RS256 key retires the old RS256 one only.
		t2 := now.Add(time.Hour)
		require.NoError(t, s.RotateKeys(ctx, []SigningKey{key("rs-2", "RS256", t2)}, retire1))
		keys, err = s.SigningKeys(ctx, t2)
		require.NoError(t, err)
		require.Equal(t, []string{"es-1", "rs-1", "rs-2"}, keyIDs(keys), "oldest first")
		byID := map[string]SigningKey{}
		for _, k := range keys {
			byID[k.ID] = k
		}
		require.NotNil(t, byID["rs-1"].PublishedUntil)
		require.True(t, byID["rs-1"].PublishedUntil.Equal(models.DBTime(retire1)))
		require.Nil(t, byID["rs-2"].PublishedUntil, "the new key is published")
		require.Nil(t, byID["es-1"].PublishedUntil, "another algorithm")

		// A later rotation leaves a retired key's time as it was.
		t3 := now.Add(2 * time.Hour)
		require.NoError(t, s.RotateKeys(ctx, []SigningKey{key("rs-3", "RS256", t3)}, now.Add(48*time.Hour)))
		for _, at := range []time.Time{retire1, retire1.Add(time.Second)} {
			keys, err = s.SigningKeys(ctx, at)
			require.NoError(t, err)
			require.Equal(t, []string{"es-1", "rs-2", "rs-3"}, keyIDs(keys), "rs-1 unpublished at %v", at)
		}
		keys, err = s.SigningKeys(ctx, now.Add(48*time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{"es-1", "rs-3"}, keyIDs(keys))

		require.ErrorIs(t, s.RotateKeys(ctx, []SigningKey{key("rs-4", "RS256", t3), key("rs-3", "RS256", t3)}, retire1),
			models.ErrConflict)
		keys, err = s.SigningKeys(ctx, now.Add(48*time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{"es-1", "rs-3"}, keyIDs(keys), "a failed rotation retires nothing")
		require.NoError(t, s.RotateKeys(ctx, nil, retire1))
		require.EqualValues(t, 4, count(t, s, "oidc_signing_keys"))
	})
}

// TestFirstKeysRace: instances that find no key at once each offer their
// first pair; one pair is stored and every one gets it back, on both
// dialects (without the lock, PostgreSQL stored several). Once keys
// exist, FirstKeys adds none.
func TestFirstKeysRace(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		got := make([][]string, 8)
		wins := raceWins(t, s, other, 8, func(i int, s *Store) (bool, error) {
			keys, err := s.FirstKeys(ctx, []SigningKey{key(fmt.Sprint("rs-", i), "RS256", now), key(fmt.Sprint("es-", i), "ES256", now)}, now)
			got[i] = keyIDs(keys)
			return len(keys) == 2, err
		})
		require.EqualValues(t, 8, wins, "every caller gets a pair: %q", got)
		for _, ids := range got {
			require.Equal(t, got[0], ids, "one pair for all")
		}
		require.EqualValues(t, 2, count(t, s, "oidc_signing_keys"))
		keys, err := s.FirstKeys(ctx, []SigningKey{key("rs-late", "RS256", now)}, now.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, got[0], keyIDs(keys))
		require.EqualValues(t, 2, count(t, s, "oidc_signing_keys"))
	})
}
