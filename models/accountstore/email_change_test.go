package accountstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/passwordstore"
)

func userByID(t *testing.T, s *Store, id string) models.User {
	t.Helper()
	var u models.User
	require.NoError(t, s.db().Where("id = ?", id).Take(&u).Error)
	return u
}

func TestEmailChange(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "old@example.com")
		require.NoError(t, s.CreateEmailChange(ctx, u.ID, "New@Example.COM", "h1", acNow.Add(time.Hour)))
		require.NoError(t, s.CreateEmailChange(ctx, u.ID, "other@example.com", "h2", acNow.Add(time.Hour)))
		require.NoError(t, s.CreateEmailChange(ctx, u.ID, "late@example.com", "dead", acNow))
		require.NoError(t, passwordstore.New(s.store).CreatePasswordReset(ctx, u.ID, "reset", acNow.Add(time.Hour)))
		require.ErrorIs(t, s.CreateEmailChange(ctx, u.ID, "x@example.com", "h1", acNow.Add(time.Hour)), models.ErrConflict)

		uid, addr, err := s.EmailChangeByHash(ctx, "h1", acNow)
		require.NoError(t, err)
		require.Equal(t, u.ID, uid)
		require.Equal(t, "new@example.com", addr, "addresses are stored lower-cased")
		for _, h := range []string{"dead", "missing", "reset"} {
			_, _, err = s.EmailChangeByHash(ctx, h, acNow)
			require.ErrorIs(t, err, models.ErrNotFound, h)
		}
		_, _, _, err = s.ApplyEmailChange(ctx, "dead", acNow)
		require.ErrorIs(t, err, models.ErrNotFound, "an expired link changes nothing")
		_, _, _, err = s.ApplyEmailChange(ctx, "reset", acNow)
		require.ErrorIs(t, err, models.ErrNotFound, "another flow's token is not a change link")
		_, err = passwordstore.New(s.store).PasswordResetByHash(ctx, "reset", acNow)
		require.NoError(t, err, "and is not spent by it")

		uid, oldAddr, newAddr, err := s.ApplyEmailChange(ctx, "h1", acNow)
		require.NoError(t, err)
		require.Equal(t, []string{u.ID, "old@example.com", "new@example.com"}, []string{uid, oldAddr, newAddr})
		got := userByID(t, s, u.ID)
		require.Equal(t, "new@example.com", *got.Email)
		require.NotNil(t, got.EmailVerified)
		require.True(t, got.EmailVerified.Equal(acNow), "verified by the link at %v", got.EmailVerified)
		_, _, err = s.EmailChangeByHash(ctx, "h2", acNow)
		require.ErrorIs(t, err, models.ErrNotFound, "the user's other pending changes go")
		_, err = passwordstore.New(s.store).PasswordResetByHash(ctx, "reset", acNow)
		require.ErrorIs(t, err, models.ErrNotFound, "a reset link mailed to the old address goes")

		_, _, _, err = s.ApplyEmailChange(ctx, "h1", acNow)
		require.ErrorIs(t, err, models.ErrNotFound, "a replayed link is dead")
		require.Equal(t, "new@example.com", *userByID(t, s, u.ID).Email)

		// A user without an address gets one; another user's links stay.
		bare, other := newUser(t, s, ""), newUser(t, s, "keep@example.com")
		require.NoError(t, s.CreateEmailChange(ctx, bare.ID, "bare@example.com", "b1", acNow.Add(time.Hour)))
		require.NoError(t, s.CreateEmailChange(ctx, other.ID, "elsewhere@example.com", "o1", acNow.Add(time.Hour)))
		_, oldAddr, newAddr, err = s.ApplyEmailChange(ctx, "b1", acNow)
		require.NoError(t, err)
		require.Empty(t, oldAddr)
		require.Equal(t, "bare@example.com", newAddr)
		_, _, err = s.EmailChangeByHash(ctx, "o1", acNow)
		require.NoError(t, err, "another user's pending change stays")

		// Ending all of a user's (sign-out everywhere, a password reset or
		// change): expired and inert ones too; another user's stay.
		require.NoError(t, s.CreateEmailChange(ctx, bare.ID, "b2@example.com", "b2", acNow.Add(time.Hour)))
		require.NoError(t, s.CreateEmailChange(ctx, bare.ID, "keep@example.com", "b3", acNow))
		n, err := s.DeleteEmailChanges(ctx, bare.ID)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		_, _, _, err = s.ApplyEmailChange(ctx, "b2", acNow)
		require.ErrorIs(t, err, models.ErrNotFound)
		_, _, err = s.EmailChangeByHash(ctx, "o1", acNow)
		require.NoError(t, err, "another user's pending change stays")

		// A user deleted since the link was mailed: nothing to change.
		require.NoError(t, s.CreateEmailChange(ctx, other.ID, "gone@example.com", "o2", acNow.Add(time.Hour)))
		_, err = s.store.DeleteUser(ctx, other.ID, acNow)
		require.NoError(t, err)
		_, _, _, err = s.ApplyEmailChange(ctx, "o2", acNow)
		require.ErrorIs(t, err, models.ErrNotFound)
	})
}

// TestEmailChangeAddressTaken: an address another user holds is refused
// with nothing written and the link not spent, whether the check sees the
// other user or the unique index does (the other user took it after the
// check, within the same instant).
func TestEmailChangeAddressTaken(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s := connect(t, c)
		ctx := context.Background()
		u := newUser(t, s, "mine@example.com")
		newUser(t, s, "taken@example.com")
		require.NoError(t, s.CreateEmailChange(ctx, u.ID, "Taken@example.com", "t1", acNow.Add(time.Hour)))
		require.NoError(t, s.CreateEmailChange(ctx, u.ID, "free@example.com", "t2", acNow.Add(time.Hour)))
		_, _, _, err := s.ApplyEmailChange(ctx, "t1", acNow)
		require.ErrorIs(t, err, models.ErrConflict)
		got := userByID(t, s, u.ID)
		require.Equal(t, "mine@example.com", *got.Email, "nothing written")
		require.Nil(t, got.EmailVerified)
		for _, h := range []string{"t1", "t2"} {
			_, _, err = s.EmailChangeByHash(ctx, h, acNow)
			require.NoError(t, err, "%s is not spent", h)
		}

		// The race the check cannot see: the address is taken between the
		// check and the UPDATE (here by a hook on the UPDATE, inside the
		// transaction, so it runs the same on both dialects).
		raced := connect(t, c)
		thief := models.NewID()
		fired := false
		require.NoError(t, raced.db().Callback().Update().Before("gorm:update").Register("test:take-address", func(db *gorm.DB) {
			if db.Statement.Table == "users" && !fired {
				fired = true
				require.NoError(t, db.Session(&gorm.Session{NewDB: true}).
					Exec("INSERT INTO users (id, email) VALUES (?, ?)", thief, "free@example.com").Error)
			}
		}))
		_, _, _, err = raced.ApplyEmailChange(ctx, "t2", acNow)
		require.True(t, fired)
		require.ErrorIs(t, err, models.ErrConflict, "the unique index's refusal is a conflict")
		require.Equal(t, "mine@example.com", *userByID(t, s, u.ID).Email, "nothing written")
		_, _, err = s.EmailChangeByHash(ctx, "t2", acNow)
		require.NoError(t, err, "the link is not spent")
		require.EqualValues(t, 2, count(t, s, "users"), "the whole transaction rolled back")
	})
}

// TestApplyEmailChangeRace: one link opened at once on two instances
// changes the address once; two users' links to one address give it to one
// of them, and the other's link stays.
func TestApplyEmailChangeRace(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		u := newUser(t, s, "before@example.com")
		require.NoError(t, s.CreateEmailChange(ctx, u.ID, "after@example.com", "once", acNow.Add(time.Hour)))
		errs := race(s, other, 8, func(s *Store, _ int) error {
			_, _, _, err := s.ApplyEmailChange(ctx, "once", acNow)
			return err
		})
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
			} else {
				require.ErrorIs(t, err, models.ErrNotFound)
			}
		}
		require.Equal(t, 1, wins, "one link, one change")
		require.Equal(t, "after@example.com", *userByID(t, s, u.ID).Email)

		var users []*models.User
		for i := range 8 {
			users = append(users, newUser(t, s, ""))
			require.NoError(t, s.CreateEmailChange(ctx, users[i].ID, "wanted@example.com", users[i].ID, acNow.Add(time.Hour)))
		}
		errs = race(s, other, 8, func(s *Store, i int) error {
			_, _, _, err := s.ApplyEmailChange(ctx, users[i].ID, acNow)
			return err
		})
		wins = 0
		for i, err := range errs {
			_, _, found := s.EmailChangeByHash(ctx, users[i].ID, acNow)
			if err == nil {
				wins++
				require.Equal(t, "wanted@example.com", *userByID(t, s, users[i].ID).Email)
				require.ErrorIs(t, found, models.ErrNotFound, "the winner's link is spent")
			} else {
				require.ErrorIs(t, err, models.ErrConflict)
				require.NoError(t, found, "a loser's link is not spent")
			}
		}
		require.Equal(t, 1, wins, "one address, one user")
	})
}
