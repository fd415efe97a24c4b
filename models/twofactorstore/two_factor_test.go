package twofactorstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

// The two-factor store on both dialects. The races run on two handles of
// one database, as two instances would be, so "exactly one winner" is the
// database's answer, not one connection pool's.

var tfNow = time.Date(2031, 5, 6, 7, 8, 9, 123456000, time.UTC)

// confirmed gives u a confirmed two-factor row at step, with codes.
func confirmed(t *testing.T, s *Store, u *models.User, step int64, codes ...string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.BeginTwoFactor(ctx, u.ID, "sealed", "key-1", tfNow))
	ok, err := s.ConfirmTwoFactor(ctx, u.ID, "sealed", "sealed", step, codes, tfNow)
	require.NoError(t, err)
	require.True(t, ok)
}

// raceWins runs f on n goroutines at once, alternating between a and b, and
// counts the trues.
func raceWins(t *testing.T, a, b *Store, n int, f func(s *Store) (bool, error)) int64 {
	t.Helper()
	var wins atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			<-start
			ok, err := f(s)
			if err != nil {
				errs <- err
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return wins.Load()
}

func TestTwoFactorEnrolment(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "e@example.com")
		_, err := s.TwoFactorOf(ctx, u.ID)
		require.ErrorIs(t, err, models.ErrNotFound)
		ok, err := s.ConfirmTwoFactor(ctx, u.ID, "sealed", "sealed", 1, []string{"c"}, tfNow)
		require.NoError(t, err)
		require.False(t, ok, "nothing to confirm")
		require.Zero(t, count(t, s, "recovery_codes"), "a refused confirmation writes no codes")

		require.NoError(t, s.BeginTwoFactor(ctx, u.ID, "sealed-1", "key-1", tfNow))
		reserve(t, s, u.ID, tfNow, 1)
		require.NoError(t, s.BeginTwoFactor(ctx, u.ID, "sealed-2", "key-2", tfNow.Add(time.Second)))
		tf, err := s.TwoFactorOf(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "sealed-2", tf.Secret, "a new enrolment replaces an unconfirmed one")
		require.Equal(t, "key-2", tf.DeviceKey)
		require.Nil(t, tf.ConfirmedAt)
		require.Zero(t, tf.Failures)
		require.Nil(t, tf.BlockedUntil)

		// Codes left from before (a hand edit, an old enrolment) are replaced.
		require.NoError(t, s.db().Omit("User").Create(&RecoveryCode{ID: models.NewID(), UserID: u.ID, CodeHash: "stale"}).Error)
		ok, err = s.ConfirmTwoFactor(ctx, u.ID, "sealed-1", "in-force", 42, []string{"h1", "h2", "h3"}, tfNow)
		require.NoError(t, err)
		require.False(t, ok, "the replaced secret confirms nothing")
		ok, err = s.ConfirmTwoFactor(ctx, u.ID, "sealed-2", "in-force", 42, []string{"h1", "h2", "h3"}, tfNow)
		require.NoError(t, err)
		require.True(t, ok)
		tf, err = s.TwoFactorOf(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "in-force", tf.Secret)
		require.NotNil(t, tf.ConfirmedAt)
		require.True(t, tf.ConfirmedAt.Equal(tfNow), "confirmed at %v", tf.ConfirmedAt)
		require.EqualValues(t, 42, tf.LastStep)
		codes, err := s.UnusedRecoveryCodes(ctx, u.ID)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"h1", "h2", "h3"}, hashes(codes))

		ok, err = s.ConfirmTwoFactor(ctx, u.ID, "in-force", "in-force", 43, []string{"x"}, tfNow)
		require.NoError(t, err)
		require.False(t, ok, "a confirmed row is not confirmed again")
		require.EqualValues(t, 3, count(t, s, "recovery_codes"))

		err = s.BeginTwoFactor(ctx, u.ID, "sealed-3", "key-3", tfNow)
		require.ErrorIs(t, err, models.ErrConflict, "a confirmed factor is not replaced")
		tf, err = s.TwoFactorOf(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "in-force", tf.Secret)
		require.NotNil(t, tf.ConfirmedAt)

		require.Error(t, s.BeginTwoFactor(ctx, models.NewID(), "s", "k", tfNow), "a user must exist")
	})
}

func hashes(codes []RecoveryCode) []string {
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = c.CodeHash
	}
	return out
}

func TestUseTOTPStep(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		u := newUser(t, s, "t@example.com")
		ok, err := s.UseTOTPStep(ctx, u.ID, 1)
		require.NoError(t, err)
		require.False(t, ok, "no row")
		require.NoError(t, s.BeginTwoFactor(ctx, u.ID, "sealed", "key", tfNow))
		ok, err = s.UseTOTPStep(ctx, u.ID, 1)
		require.NoError(t, err)
		require.False(t, ok, "an unconfirmed row accepts no code")

		ok, err = s.ConfirmTwoFactor(ctx, u.ID, "sealed", "sealed", 100, nil, tfNow)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.UseTOTPStep(ctx, u.ID, 100)
		require.NoError(t, err)
		require.False(t, ok, "the confirming code is spent")

		reserve(t, s, u.ID, tfNow, 1)
		ok, err = s.UseTOTPStep(ctx, u.ID, 102)
		require.NoError(t, err)
		require.True(t, ok)
		tf, err := s.TwoFactorOf(ctx, u.ID)
		require.NoError(t, err)
		require.EqualValues(t, 102, tf.LastStep)
		require.Zero(t, tf.Failures, "a right code clears the failures")
		require.Nil(t, tf.BlockedUntil)
		for _, step := range []int64{102, 101} {
			ok, err = s.UseTOTPStep(ctx, u.ID, step)
			require.NoError(t, err)
			require.False(t, ok, "step %d after 102", step)
		}

		wins := raceWins(t, s, other, 8, func(s *Store) (bool, error) { return s.UseTOTPStep(ctx, u.ID, 103) })
		require.EqualValues(t, 1, wins, "one code, one sign-in")
	})
}

// reserve is ReserveTwoFactorCheck with free 5 and an hour's hold, which
// must pass.
func reserve(t *testing.T, s *Store, userID string, now time.Time, want int) {
	t.Helper()
	n, ok, err := s.ReserveTwoFactorCheck(context.Background(), userID, now, 5, now.Add(time.Hour))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, want, n)
}

func TestReserveTwoFactorCheck(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		u := newUser(t, s, "f@example.com")
		_, ok, err := s.ReserveTwoFactorCheck(ctx, u.ID, tfNow, 5, tfNow.Add(time.Hour))
		require.NoError(t, err)
		require.False(t, ok, "no row")
		confirmed(t, s, u, 1)

		for i := 1; i <= 4; i++ {
			reserve(t, s, u.ID, tfNow, i)
		}
		tf, err := s.TwoFactorOf(ctx, u.ID)
		require.NoError(t, err)
		require.Nil(t, tf.BlockedUntil, "no block before the fifth")
		require.NoError(t, s.BackOffTwoFactor(ctx, u.ID, 5, tfNow.Add(time.Minute)))
		tf, _ = s.TwoFactorOf(ctx, u.ID)
		require.Nil(t, tf.BlockedUntil, "a backoff for a count not reached writes nothing")
		reserve(t, s, u.ID, tfNow, 5)
		tf, _ = s.TwoFactorOf(ctx, u.ID)
		require.True(t, tf.BlockedUntil.Equal(tfNow.Add(time.Hour)), "the fifth holds the codes: %v", tf.BlockedUntil)
		_, ok, err = s.ReserveTwoFactorCheck(ctx, u.ID, tfNow, 5, tfNow.Add(time.Hour))
		require.NoError(t, err)
		require.False(t, ok, "blocked: not counted, not checked")
		require.NoError(t, s.BackOffTwoFactor(ctx, u.ID, 5, tfNow.Add(2*time.Minute)))
		tf, _ = s.TwoFactorOf(ctx, u.ID)
		require.Equal(t, 5, tf.Failures)
		require.True(t, tf.BlockedUntil.Equal(tfNow.Add(2*time.Minute)), "the check's own backoff: %v", tf.BlockedUntil)

		// Past the block one more is checked, and blocks again.
		later := tfNow.Add(3 * time.Minute)
		reserve(t, s, u.ID, later, 6)

		// A right code clears the count; then of 16 racing on two
		// connections exactly 5 are counted.
		ok, err = s.UseTOTPStep(ctx, u.ID, 5)
		require.NoError(t, err)
		require.True(t, ok)
		wins := raceWins(t, s, other, 16, func(s *Store) (bool, error) {
			_, ok, err := s.ReserveTwoFactorCheck(ctx, u.ID, later, 5, later.Add(time.Hour))
			return ok, err
		})
		require.EqualValues(t, 5, wins)
		tf, _ = s.TwoFactorOf(ctx, u.ID)
		require.Equal(t, 5, tf.Failures)
	})
}

func TestRecoveryCodes(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		u := newUser(t, s, "r@example.com")
		ok, err := s.ReplaceRecoveryCodes(ctx, u.ID, []string{"x"}, tfNow)
		require.NoError(t, err)
		require.False(t, ok, "no row")
		require.NoError(t, s.BeginTwoFactor(ctx, u.ID, "sealed", "key", tfNow))
		ok, err = s.ReplaceRecoveryCodes(ctx, u.ID, []string{"x"}, tfNow)
		require.NoError(t, err)
		require.False(t, ok, "not confirmed")
		require.Zero(t, count(t, s, "recovery_codes"))

		ok, err = s.ConfirmTwoFactor(ctx, u.ID, "sealed", "sealed", 1, []string{"a", "b", "c"}, tfNow)
		require.NoError(t, err)
		require.True(t, ok)
		codes, err := s.UnusedRecoveryCodes(ctx, u.ID)
		require.NoError(t, err)
		require.Len(t, codes, 3)
		for _, c := range codes {
			require.Len(t, c.ID, 36, "ids are NewID's")
		}

		stranger := newUser(t, s, "x@example.com")
		ok, err = s.UseRecoveryCode(ctx, stranger.ID, codes[0].ID, tfNow)
		require.NoError(t, err)
		require.False(t, ok, "another user's code")

		reserve(t, s, u.ID, tfNow, 1)
		require.NoError(t, s.BackOffTwoFactor(ctx, u.ID, 1, tfNow.Add(time.Hour)))
		ok, err = s.UseRecoveryCode(ctx, u.ID, codes[0].ID, tfNow)
		require.NoError(t, err)
		require.True(t, ok)
		tf, err := s.TwoFactorOf(ctx, u.ID)
		require.NoError(t, err)
		require.Zero(t, tf.Failures, "a right code clears the failures")
		require.Nil(t, tf.BlockedUntil)
		ok, err = s.UseRecoveryCode(ctx, u.ID, codes[0].ID, tfNow)
		require.NoError(t, err)
		require.False(t, ok, "a code is single-use")

		wins := raceWins(t, s, other, 8, func(s *Store) (bool, error) { return s.UseRecoveryCode(ctx, u.ID, codes[1].ID, tfNow) })
		require.EqualValues(t, 1, wins, "one code, one sign-in")
		left, err := s.UnusedRecoveryCodes(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, []string{codes[2].CodeHash}, hashes(left))

		ok, err = s.ReplaceRecoveryCodes(ctx, u.ID, []string{"d", "e"}, tfNow)
		require.NoError(t, err)
		require.True(t, ok)
		left, err = s.UnusedRecoveryCodes(ctx, u.ID)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"d", "e"}, hashes(left))
		require.EqualValues(t, 2, count(t, s, "recovery_codes"), "used codes go too")
	})
}

func TestSecondSteps(t *testing.T) {
	eachDialect(t, func(t *testing.T, c models.Config) {
		s, other := connect(t, c), connect(t, c)
		ctx := context.Background()
		u := newUser(t, s, "s@example.com")
		_, err := s.SecondStepByHash(ctx, "none")
		require.ErrorIs(t, err, models.ErrNotFound)

		exp := tfNow.Add(5 * time.Minute)
		st := &SecondStep{TokenHash: "step-1", UserID: u.ID, Provider: "credentials", Methods: "pwd",
			CallbackURL: "https://app.example.com/", IsNew: true, Enrol: true, Expires: exp.In(time.FixedZone("X", 3600)), CreatedAt: tfNow}
		require.NoError(t, s.CreateSecondStep(ctx, st))
		dup := *st
		require.ErrorIs(t, s.CreateSecondStep(ctx, &dup), models.ErrConflict)
		got, err := s.SecondStepByHash(ctx, "step-1")
		require.NoError(t, err)
		require.Equal(t, u.ID, got.UserID)
		require.Equal(t, "credentials", got.Provider)
		require.Equal(t, "pwd", got.Methods)
		require.Equal(t, "https://app.example.com/", got.CallbackURL)
		require.True(t, got.IsNew)
		require.True(t, got.Enrol)
		require.Zero(t, got.Attempts)
		require.True(t, got.Expires.Equal(exp), "expires %v", got.Expires)

		for i := range 3 {
			ok, err := s.CountSecondStepAttempt(ctx, "step-1", 3, tfNow)
			require.NoError(t, err)
			require.True(t, ok, "attempt %d", i+1)
		}
		ok, err := s.CountSecondStepAttempt(ctx, "step-1", 3, tfNow)
		require.NoError(t, err)
		require.False(t, ok, "no attempts left")
		got, err = s.SecondStepByHash(ctx, "step-1")
		require.NoError(t, err)
		require.Equal(t, 3, got.Attempts, "a refused attempt is not counted")

		require.NoError(t, s.CreateSecondStep(ctx, &SecondStep{TokenHash: "step-2", UserID: u.ID, Expires: exp}))
		for _, at := range []time.Time{exp, exp.Add(time.Second)} {
			ok, err = s.CountSecondStepAttempt(ctx, "step-2", 3, at)
			require.NoError(t, err)
			require.False(t, ok, "expired at %v", at)
		}
		ok, err = s.CountSecondStepAttempt(ctx, "missing", 3, tfNow)
		require.NoError(t, err)
		require.False(t, ok)

		// Attempts racing on two instances: never more than max between them.
		require.NoError(t, s.CreateSecondStep(ctx, &SecondStep{TokenHash: "step-3", UserID: u.ID, Expires: exp}))
		wins := raceWins(t, s, other, 8, func(s *Store) (bool, error) { return s.CountSecondStepAttempt(ctx, "step-3", 5, tfNow) })
		require.EqualValues(t, 5, wins)

		wins = raceWins(t, s, other, 8, func(s *Store) (bool, error) { return s.ConsumeSecondStep(ctx, "step-3") })
		require.EqualValues(t, 1, wins, "a step completes one sign-in")
		_, err = s.SecondStepByHash(ctx, "step-3")
		require.ErrorIs(t, err, models.ErrNotFound)

		// A user's steps end together (a password reset), another's stay.
		v := newUser(t, s, "v@example.com")
		require.NoError(t, s.CreateSecondStep(ctx, &SecondStep{TokenHash: "step-v", UserID: v.ID, Expires: exp}))
		require.NoError(t, s.DeleteSecondStepsOf(ctx, u.ID))
		for _, h := range []string{"step-1", "step-2"} {
			_, err = s.SecondStepByHash(ctx, h)
			require.ErrorIs(t, err, models.ErrNotFound, h)
		}
		_, err = s.SecondStepByHash(ctx, "step-v")
		require.NoError(t, err)
		require.NoError(t, s.DeleteSecondStepsOf(ctx, u.ID), "none left: nothing to end")
	})
}

func TestPurgeExpiredSecondSteps(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "p@example.com")
		require.NoError(t, s.CreateSecondStep(ctx, &SecondStep{TokenHash: "old", UserID: u.ID, Expires: tfNow.Add(-time.Second)}))
		require.NoError(t, s.CreateSecondStep(ctx, &SecondStep{TokenHash: "new", UserID: u.ID, Expires: tfNow.Add(time.Second)}))
		n, err := s.store.PurgeExpired(ctx, tfNow)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		_, err = s.SecondStepByHash(ctx, "old")
		require.ErrorIs(t, err, models.ErrNotFound)
		_, err = s.SecondStepByHash(ctx, "new")
		require.NoError(t, err)
	})
}

func TestDeleteTwoFactorAndForgetDevices(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "d@example.com")
		keep := newUser(t, s, "k@example.com")
		ok, err := s.ForgetDevices(ctx, u.ID, "key-2")
		require.NoError(t, err)
		require.False(t, ok, "no row")
		ok, err = s.DeleteTwoFactor(ctx, u.ID)
		require.NoError(t, err)
		require.False(t, ok, "no row")

		confirmed(t, s, u, 1, "a", "b")
		confirmed(t, s, keep, 1, "c")
		for i, id := range []string{u.ID, u.ID, keep.ID} {
			require.NoError(t, s.CreateSecondStep(ctx, &SecondStep{TokenHash: fmt.Sprint("step-", i), UserID: id, Expires: tfNow.Add(time.Minute)}))
		}

		ok, err = s.ForgetDevices(ctx, u.ID, "key-2")
		require.NoError(t, err)
		require.True(t, ok)
		tf, err := s.TwoFactorOf(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, "key-2", tf.DeviceKey)

		ok, err = s.DeleteTwoFactor(ctx, u.ID)
		require.NoError(t, err)
		require.True(t, ok)
		_, err = s.TwoFactorOf(ctx, u.ID)
		require.ErrorIs(t, err, models.ErrNotFound)
		codes, err := s.UnusedRecoveryCodes(ctx, u.ID)
		require.NoError(t, err)
		require.Empty(t, codes)
		for _, h := range []string{"step-0", "step-1"} {
			_, err = s.SecondStepByHash(ctx, h)
			require.ErrorIs(t, err, models.ErrNotFound, "a pending sign-in of the old factor cannot finish")
		}
		ok, err = s.DeleteTwoFactor(ctx, u.ID)
		require.NoError(t, err)
		require.False(t, ok)

		// The other user keeps everything.
		_, err = s.TwoFactorOf(ctx, keep.ID)
		require.NoError(t, err)
		require.EqualValues(t, 1, count(t, s, "recovery_codes"))
		_, err = s.SecondStepByHash(ctx, "step-2")
		require.NoError(t, err)
	})
}

func TestTwoFactorGoesWithUser(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := newUser(t, s, "gone@example.com")
		confirmed(t, s, u, 1, "a", "b")
		require.NoError(t, s.CreateSecondStep(ctx, &SecondStep{TokenHash: "h", UserID: u.ID, Expires: tfNow}))
		_, err := s.store.DeleteUser(ctx, u.ID, tfNow)
		require.NoError(t, err)
		for _, table := range []string{"two_factors", "recovery_codes", "second_steps"} {
			require.Zero(t, count(t, s, table), table)
		}
	})
}
