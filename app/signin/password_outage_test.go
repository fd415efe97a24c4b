package signin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/throttlestore"
)

// The password throttle's counters live in the database. While it is down
// (or failing over) no password is checked, and the answer is TryLater,
// not CredentialsSignin: a user with the right password is not told it is
// wrong, and a guesser gets no free guesses. The user lookup, which comes
// first (the throttle needs the user), answers the same when it fails.
func TestPasswordSignInWhileCountersAreDown(t *testing.T) {
	s := service(newStore())
	for name, users := range map[string]signin.Passwords{"counters": passwordsErr{models.ErrNotFound}, "users": passwordsErr{errBoom}} {
		p := signin.CredentialsProvider{ID: "credentials", Passwords: users, Throttle: &signin.Throttle{Store: downThrottles{}}}
		_, err := s.SignInWithPassword(context.Background(), nil, p, signin.PasswordLogin{Email: "a@example.com", Password: "correct horse battery staple"})
		requireCode(t, err, signin.CodeTryLater)
		if !errors.Is(err, errBoom) {
			t.Fatalf("%s down: the cause is kept for the log and the outage mark: %v", name, err)
		}
	}
}

// passwordsErr is a password store whose user lookup answers err.
type passwordsErr struct{ err error }

func (p passwordsErr) UserAndPasswordByEmail(context.Context, string) (*models.User, string, error) {
	return nil, "", p.err
}

func (p passwordsErr) PasswordHash(context.Context, string) (string, error) { return "", p.err }

func (p passwordsErr) ReplacePasswordHash(context.Context, string, string, string) (bool, error) {
	return false, p.err
}

// downThrottles is a throttle store whose database does not answer.
type downThrottles struct{}

func (downThrottles) PasswordThrottles(context.Context, time.Time, ...string) (map[string]throttlestore.PasswordThrottle, error) {
	return nil, errBoom
}

func (downThrottles) RecordPasswordFailure(context.Context, time.Time, string, time.Duration) (int, error) {
	return 0, errBoom
}

func (downThrottles) ClaimPasswordBucket(context.Context, string, time.Time, time.Time) (bool, error) {
	return false, errBoom
}
func (downThrottles) ForgetPasswordFailure(context.Context, string) error         { return errBoom }
func (downThrottles) MarkPasswordBucket(context.Context, string, time.Time) error { return errBoom }
func (downThrottles) ClearPasswordThrottles(context.Context, ...string) error     { return errBoom }
