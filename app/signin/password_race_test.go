package signin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/throttlestore"
)

// A password reset or change that commits while a sign-in checks the old
// password (Argon2id, and up to the hashing slot's wait) ends every
// session signed in up to then, but not one started after it: the sign-in
// must not start a session on a password that is no longer the account's.
// The same hash re-made with other parameters (a parallel sign-in's
// re-hash) is the same password, and signs in.
func TestPasswordChangedDuringSignIn(t *testing.T) {
	h, err := password.New(password.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})
	if err != nil {
		t.Fatal(err)
	}
	const pw = "correct horse battery staple"
	hashOf := func(pw string) string {
		s, err := h.Hash(pw)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for name, c := range map[string]struct {
		then   string // the stored hash once the sign-in has read it ("": removed)
		signIn bool
	}{
		"unchanged":         {then: "", signIn: true},
		"reset meanwhile":   {then: hashOf("a new password of the owner"), signIn: false},
		"re-hashed":         {then: hashOf(pw), signIn: true},
		"removed meanwhile": {then: "-", signIn: false},
	} {
		t.Run(name, func(t *testing.T) {
			st := newStore()
			u := st.addUser("a@example.com")
			u.EmailVerified = &now
			old := hashOf(pw)
			then := c.then
			switch then {
			case "":
				then = old
			case "-":
				then = ""
			}
			pws := &changingPasswords{user: u, hash: old, then: then}
			b := &browser{}
			p := signin.CredentialsProvider{ID: "credentials", Hasher: h, Passwords: pws}
			_, err := service(st).SignInWithPassword(context.Background(), b, p, signin.PasswordLogin{Email: "a@example.com", Password: pw})
			if c.signIn {
				if err != nil || len(b.started) != 1 {
					t.Fatalf("want a session, got %v (%d started)", err, len(b.started))
				}
				return
			}
			requireCode(t, err, signin.CodeCredentialsSignin)
			if len(b.started) != 0 {
				t.Fatalf("a session started on a password changed during its check")
			}
		})
	}
}

// changingPasswords holds one user's hash, which becomes then right after
// the sign-in read it: a reset committed while the password was checked.
type changingPasswords struct {
	mu         sync.Mutex
	user       *models.User
	hash, then string
}

func (p *changingPasswords) UserAndPasswordByEmail(context.Context, string) (*models.User, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	read := p.hash
	p.hash = p.then
	return p.user, read, nil
}

func (p *changingPasswords) PasswordHash(context.Context, string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hash == "" {
		return "", models.ErrNotFound
	}
	return p.hash, nil
}

func (p *changingPasswords) ReplacePasswordHash(_ context.Context, _, old, hash string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hash != old {
		return false, nil
	}
	p.hash = hash
	return true, nil
}

// A right password that the JWT hook then refuses (AccessDenied) is no
// sign-in: the throttle neither marks the client known to the user nor
// clears the account-and-client count (it gets the attempt back only), and
// the browser gets no device cookie.
func TestPasswordRefusedByTheJWTHookIsNoSuccess(t *testing.T) {
	h, err := password.New(password.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})
	if err != nil {
		t.Fatal(err)
	}
	const pw = "correct horse battery staple"
	hash, err := h.Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	st := newStore()
	u := st.addUser("a@example.com")
	u.EmailVerified = &now
	s := service(st)
	s.JWTSessions = true
	s.Hooks.JWT = func(map[string]any, signin.JWTInput) map[string]any { return nil }
	th := &recordingThrottles{}
	p := signin.CredentialsProvider{ID: "credentials", Hasher: h, Passwords: &changingPasswords{user: u, hash: hash, then: hash},
		Throttle: signin.NewThrottle(th)}
	b := &browser{}
	out, err := s.SignInWithPassword(context.Background(), b, p, signin.PasswordLogin{Email: "a@example.com", Password: pw, ClientIP: "192.0.2.1"})
	requireCode(t, err, signin.CodeAccessDenied)
	if out != nil || len(b.started) != 0 {
		t.Fatalf("a refused sign-in started a session or gave a device cookie")
	}
	if th.marked != 0 || th.cleared != 0 {
		t.Fatalf("refused by the JWT hook, yet %d known marks and %d cleared counts", th.marked, th.cleared)
	}
}

// recordingThrottles is an empty throttle store that counts the marks and
// clears a success makes.
type recordingThrottles struct{ marked, cleared int }

func (*recordingThrottles) PasswordThrottles(context.Context, time.Time, ...string) (map[string]throttlestore.PasswordThrottle, error) {
	return map[string]throttlestore.PasswordThrottle{}, nil
}

func (*recordingThrottles) RecordPasswordFailure(context.Context, time.Time, string, time.Duration) (int, error) {
	return 1, nil
}

func (*recordingThrottles) ClaimPasswordBucket(context.Context, string, time.Time, time.Time) (bool, error) {
	return true, nil
}
func (*recordingThrottles) ForgetPasswordFailure(context.Context, string) error { return nil }
func (r *recordingThrottles) MarkPasswordBucket(context.Context, string, time.Time) error {
	r.marked++
	return nil
}

func (r *recordingThrottles) ClearPasswordThrottles(context.Context, ...string) error {
	r.cleared++
	return nil
}
