package accountstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

func signIn(t *testing.T, s *Store, u *models.User, id string, created, expires time.Time) *SignIn {
	t.Helper()
	si := &SignIn{ID: id, UserID: u.ID, Device: "Firefox 128 on Linux", Network: "2001:db8:1::/48", CreatedAt: created, Expires: expires}
	require.NoError(t, s.CreateSignIn(context.Background(), si))
	return si
}

func idsOf(list []SignIn) []string {
	out := make([]string, len(list))
	for i, si := range list {
		out[i] = si.ID
	}
	return out
}

func TestCreateAndListSignIns(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, other := newUser(t, s, "u@example.com"), newUser(t, s, "o@example.com")
		signIn(t, s, u, "old", acNow.Add(-2*time.Hour), acNow.Add(time.Hour))
		signIn(t, s, u, "new", acNow.Add(-time.Hour), acNow.Add(time.Hour))
		signIn(t, s, u, "expired", acNow.Add(-3*time.Hour), acNow)
		signIn(t, s, u, "ended", acNow.Add(-time.Minute), acNow.Add(time.Hour))
		signIn(t, s, other, "theirs", acNow, acNow.Add(time.Hour))
		ok, err := s.EndSignIn(ctx, u.ID, "ended", acNow)
		require.NoError(t, err)
		require.True(t, ok)

		list, err := s.SignInsOfUser(ctx, u.ID, acNow)
		require.NoError(t, err)
		require.Equal(t, []string{"new", "old"}, idsOf(list), "live ones of this user, newest first")
		got := list[1]
		require.Equal(t, u.ID, got.UserID)
		require.Equal(t, "Firefox 128 on Linux", got.Device)
		require.Equal(t, "2001:db8:1::/48", got.Network)
		require.True(t, got.CreatedAt.Equal(acNow.Add(-2*time.Hour)), "created %v", got.CreatedAt)
		require.True(t, got.LastSeen.Equal(got.CreatedAt), "last seen starts at the sign-in: %v", got.LastSeen)
		require.True(t, got.Expires.Equal(acNow.Add(time.Hour)))
		require.Nil(t, got.EndedAt)

		err = s.CreateSignIn(ctx, &SignIn{ID: "old", UserID: u.ID, CreatedAt: acNow, Expires: acNow.Add(time.Hour)})
		require.ErrorIs(t, err, models.ErrConflict, "a sid is stored once")
		err = s.CreateSignIn(ctx, &SignIn{UserID: models.NewID(), CreatedAt: acNow, Expires: acNow.Add(time.Hour)})
		require.Error(t, err, "a user must exist")
		fresh := &SignIn{UserID: u.ID, Expires: acNow.Add(time.Hour)}
		require.NoError(t, s.CreateSignIn(ctx, fresh))
		require.NotEmpty(t, fresh.ID, "an empty id gets one")
		require.False(t, fresh.CreatedAt.IsZero())
	})
}

func TestSeenSignIn(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "u@example.com")
		signIn(t, s, u, "a", acNow, acNow.Add(time.Hour))
		signIn(t, s, u, "b", acNow, acNow.Add(time.Hour))
		row := func(id string) SignIn {
			t.Helper()
			var si SignIn
			require.NoError(t, s.db().Where("id = ?", id).Take(&si).Error)
			return si
		}
		lastSeen := func(id string) time.Time { t.Helper(); return row(id).LastSeen }
		end := acNow.Add(time.Hour)
		seen := acNow.Add(10*time.Minute + 789)
		require.NoError(t, s.SeenSignIn(ctx, "a", seen, end))
		require.True(t, lastSeen("a").Equal(seen.Truncate(time.Microsecond)), "last seen %v", lastSeen("a"))
		require.True(t, lastSeen("b").Equal(acNow), "only that sign-in moved")
		require.NoError(t, s.SeenSignIn(ctx, "a", acNow.Add(time.Minute), end))
		require.True(t, lastSeen("a").Equal(seen.Truncate(time.Microsecond)), "it never moves back")
		require.NoError(t, s.SeenSignIn(ctx, "missing", seen, end), "a purged record is no error")

		// Re-issued under a raised absolute_max_age: the record lasts as
		// long as the token may, and never less (a shortened one).
		later := acNow.Add(3 * time.Hour)
		require.NoError(t, s.SeenSignIn(ctx, "a", seen, later))
		require.True(t, row("a").Expires.Equal(later), "expires %v", row("a").Expires)
		require.True(t, lastSeen("a").Equal(seen.Truncate(time.Microsecond)), "seen again at the same moment: kept")
		require.NoError(t, s.SeenSignIn(ctx, "a", seen.Add(time.Minute), acNow.Add(2*time.Hour)))
		require.True(t, row("a").Expires.Equal(later), "never moved back")
		require.True(t, lastSeen("a").Equal(seen.Add(time.Minute).Truncate(time.Microsecond)))
		require.True(t, row("b").Expires.Equal(end), "only that sign-in moved")
		ended, err := s.EndSignIn(ctx, u.ID, "a", seen.Add(2*time.Minute))
		require.NoError(t, err)
		require.True(t, ended)
		ids, err := s.EndedSignIns(ctx, acNow.Add(2*time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{"a"}, ids, "ended until its last token's end")
	})
}

func TestEndSignIn(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		u, them := newUser(t, s, "u@example.com"), newUser(t, s, "o@example.com")
		signIn(t, s, u, "mine", acNow, acNow.Add(time.Hour))
		signIn(t, s, u, "expired", acNow.Add(-time.Hour), acNow)
		signIn(t, s, them, "theirs", acNow, acNow.Add(time.Hour))

		for _, id := range []string{"theirs", "expired", "missing"} {
			ok, err := s.EndSignIn(ctx, u.ID, id, acNow)
			require.NoError(t, err)
			require.False(t, ok, id)
		}
		ended, err := s.EndedSignIns(ctx, acNow.Add(-time.Hour))
		require.NoError(t, err)
		require.Empty(t, ended, "a refusal ends nothing")

		errs := race(s, other, 8, func(s *Store, _ int) error {
			ok, err := s.EndSignIn(ctx, u.ID, "mine", acNow)
			if err == nil && !ok {
				return errNotMine
			}
			return err
		})
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
			} else {
				require.ErrorIs(t, err, errNotMine)
			}
		}
		require.Equal(t, 1, wins, "ended once")
		list, err := s.SignInsOfUser(ctx, u.ID, acNow)
		require.NoError(t, err)
		require.Empty(t, list)
		var si SignIn
		require.NoError(t, s.db().Where("id = ?", "mine").Take(&si).Error)
		require.NotNil(t, si.EndedAt)
		require.True(t, si.EndedAt.Equal(acNow), "ended at %v", si.EndedAt)
		require.NoError(t, s.SeenSignIn(ctx, "mine", acNow.Add(time.Minute), acNow.Add(2*time.Hour)))
		require.NoError(t, s.db().Where("id = ?", "mine").Take(&si).Error)
		require.True(t, si.LastSeen.Equal(acNow), "an ended sign-in is not seen again")
		require.True(t, si.Expires.Equal(acNow.Add(time.Hour)), "nor extended")
	})
}

var errNotMine = errors.New("not ended")

func TestEndOtherSignIns(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, them := newUser(t, s, "u@example.com"), newUser(t, s, "o@example.com")
		for _, id := range []string{"this", "a", "b"} {
			signIn(t, s, u, id, acNow, acNow.Add(time.Hour))
		}
		signIn(t, s, u, "expired", acNow.Add(-time.Hour), acNow.Add(-time.Second))
		signIn(t, s, them, "theirs", acNow, acNow.Add(time.Hour))
		n, err := s.EndOtherSignIns(ctx, u.ID, "this", acNow)
		require.NoError(t, err)
		require.EqualValues(t, 2, n, "the live others, not the expired one")
		list, err := s.SignInsOfUser(ctx, u.ID, acNow)
		require.NoError(t, err)
		require.Equal(t, []string{"this"}, idsOf(list))
		list, err = s.SignInsOfUser(ctx, them.ID, acNow)
		require.NoError(t, err)
		require.Equal(t, []string{"theirs"}, idsOf(list), "another user's sign-ins stay")
		n, err = s.EndOtherSignIns(ctx, u.ID, "this", acNow)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

// TestEndedSignIns: the poll lists the ended sign-ins whose tokens could
// still be used, and neither live nor expired ones.
func TestEndedSignIns(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "u@example.com")
		signIn(t, s, u, "live", acNow, acNow.Add(time.Hour))
		signIn(t, s, u, "ended", acNow, acNow.Add(time.Hour))
		signIn(t, s, u, "ended-expired", acNow.Add(-2*time.Hour), acNow.Add(time.Minute))
		signIn(t, s, u, "expired", acNow.Add(-2*time.Hour), acNow.Add(time.Minute))
		for _, id := range []string{"ended", "ended-expired"} {
			ok, err := s.EndSignIn(ctx, u.ID, id, acNow)
			require.NoError(t, err)
			require.True(t, ok)
		}
		ids, err := s.EndedSignIns(ctx, acNow)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"ended", "ended-expired"}, ids)
		ids, err = s.EndedSignIns(ctx, acNow.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, []string{"ended"}, ids, "an expired one's token is refused by its own end")
	})
}

// TestSignInsGo: the purge deletes sign-ins past their end (and counts
// them); deleting the user deletes its sign-ins.
func TestSignInsGo(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u, gone := newUser(t, s, "u@example.com"), newUser(t, s, "g@example.com")
		signIn(t, s, u, "live", acNow, acNow.Add(time.Second))
		signIn(t, s, u, "old", acNow.Add(-time.Hour), acNow.Add(-time.Second))
		signIn(t, s, u, "old-ended", acNow.Add(-time.Hour), acNow.Add(-time.Second))
		require.NoError(t, s.db().Model(&SignIn{}).Where("id = ?", "old-ended").Update("ended_at", acNow.Add(-time.Hour)).Error)
		n, err := s.store.PurgeExpired(ctx, acNow)
		require.NoError(t, err)
		require.EqualValues(t, 2, n, "the purge counts them")
		var ids []string
		require.NoError(t, s.db().Model(&SignIn{}).Pluck("id", &ids).Error)
		require.Equal(t, []string{"live"}, ids)

		signIn(t, s, gone, "theirs", acNow, acNow.Add(time.Hour))
		_, err = s.store.DeleteUser(ctx, gone.ID, acNow)
		require.NoError(t, err)
		require.EqualValues(t, 1, count(t, s, "sign_ins"), "a deleted user's sign-ins go with it")
	})
}

// TestEndedSignInsDigest: the poll's digest changes when a sign-in ends
// and when an ended one expires, and not otherwise.
func TestEndedSignInsDigest(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "u@example.com")
		signIn(t, s, u, "a", acNow, acNow.Add(time.Hour))
		signIn(t, s, u, "b", acNow, acNow.Add(2*time.Hour))
		none, err := s.EndedSignInsDigest(ctx, acNow)
		require.NoError(t, err)
		require.Equal(t, EndedDigest{}, none)
		_, err = s.EndSignIn(ctx, u.ID, "a", acNow)
		require.NoError(t, err)
		one, err := s.EndedSignInsDigest(ctx, acNow)
		require.NoError(t, err)
		require.EqualValues(t, 1, one.Rows)
		require.NotEmpty(t, one.Last)
		again, err := s.EndedSignInsDigest(ctx, acNow)
		require.NoError(t, err)
		require.Equal(t, one, again, "nothing changed, the same digest")
		_, err = s.EndSignIn(ctx, u.ID, "b", acNow.Add(time.Second))
		require.NoError(t, err)
		two, err := s.EndedSignInsDigest(ctx, acNow.Add(time.Second))
		require.NoError(t, err)
		require.NotEqual(t, one, two)
		gone, err := s.EndedSignInsDigest(ctx, acNow.Add(time.Hour))
		require.NoError(t, err)
		require.EqualValues(t, 1, gone.Rows, "a is past its end")
	})
}
