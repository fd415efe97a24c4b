package accounts_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/passwordstore"
	"github.com/latchkey-auth/latchkey/models/throttlestore"
)

var errBoom = errors.New("boom")

var now = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// store is an in-memory accounts.Store with models.Store's not-found and
// conflict answers. Links are kept by hash, as rows are.
type store struct {
	users     map[string]*models.User
	accounts  map[string][]models.Account // by user
	passwords map[string]string           // user → hash
	passkeys  map[string]models.Authenticator
	signUps   map[string]passwordstore.PendingSignUp // token hash →
	resets    map[string]string                      // token hash → user id
	revoked   map[string]time.Time
	nextID    int
	// committed, when set, runs after a password reset's transaction: a
	// test's client hanging up at that moment.
	committed func()
}

func newStore() *store {
	return &store{users: map[string]*models.User{}, accounts: map[string][]models.Account{}, passwords: map[string]string{},
		passkeys: map[string]models.Authenticator{}, signUps: map[string]passwordstore.PendingSignUp{}, resets: map[string]string{},
		revoked: map[string]time.Time{}}
}

func (s *store) addUser(email string, verified bool) *models.User {
	s.nextID++
	u := &models.User{ID: fmt.Sprint("u", s.nextID)}
	if email != "" {
		u.Email = &email
	}
	if verified {
		at := now.Add(-time.Hour)
		u.EmailVerified = &at
	}
	s.users[u.ID] = u
	return u
}

func (s *store) UserByID(_ context.Context, id string) (*models.User, error) {
	if u, ok := s.users[id]; ok {
		return u, nil
	}
	return nil, models.ErrNotFound
}

func (s *store) UserByEmail(_ context.Context, email string) (*models.User, error) {
	for _, u := range s.users {
		if u.Email != nil && strings.EqualFold(*u.Email, email) {
			return u, nil
		}
	}
	return nil, models.ErrNotFound
}

func (s *store) AccountsOf(_ context.Context, userID string) ([]models.Account, error) {
	return s.accounts[userID], nil
}

func (s *store) HasSignInMethod(_ context.Context, userID string) (bool, error) {
	keys := 0
	for _, k := range s.passkeys {
		if k.UserID == userID {
			keys++
		}
	}
	return len(s.accounts[userID]) > 0 || s.passwords[userID] != "" || keys > 0, nil
}

func (s *store) CreatePasswordSignUp(_ context.Context, email, tokenHash, pwHash string, expires time.Time) error {
	s.signUps[tokenHash] = passwordstore.PendingSignUp{TokenHash: tokenHash, Email: email, PasswordHash: pwHash, Expires: expires}
	return nil
}

func (s *store) DeletePasswordSignUp(_ context.Context, tokenHash string) error {
	delete(s.signUps, tokenHash)
	return nil
}

func (s *store) PasswordSignUpByHash(_ context.Context, tokenHash string, at time.Time) (*passwordstore.PendingSignUp, error) {
	p, ok := s.signUps[tokenHash]
	if !ok || !p.Expires.After(at) {
		return nil, models.ErrNotFound
	}
	return &p, nil
}

// CompletePasswordSignUp: a verified holder keeps the address
// (ErrConflict); an unverified one with a way to sign in loses it to a
// new user (models.releaseUnproved).
func (s *store) CompletePasswordSignUp(ctx context.Context, tokenHash string, at time.Time) (*passwordstore.SignedUp, error) {
	p, err := s.PasswordSignUpByHash(ctx, tokenHash, at)
	if err != nil {
		return nil, err
	}
	if u, err := s.UserByEmail(ctx, p.Email); err == nil {
		if u.EmailVerified != nil {
			return nil, models.ErrConflict
		}
		u.Email = nil
	}
	for h, o := range s.signUps {
		if o.Email == p.Email {
			delete(s.signUps, h)
		}
	}
	u := s.addUser(p.Email, true)
	s.passwords[u.ID] = p.PasswordHash
	return &passwordstore.SignedUp{User: u}, nil
}

func (s *store) CreatePasswordReset(_ context.Context, userID, tokenHash string, _ time.Time) error {
	s.resets[tokenHash] = userID
	return nil
}

func (s *store) DeletePasswordReset(_ context.Context, _, tokenHash string) error {
	delete(s.resets, tokenHash)
	return nil
}

func (s *store) PasswordResetByHash(_ context.Context, tokenHash string, _ time.Time) (string, error) {
	if id, ok := s.resets[tokenHash]; ok {
		return id, nil
	}
	return "", models.ErrNotFound
}

// CompletePasswordReset: the owner's proof wins over an unverified holder
// with a way to sign in of its own, as passwordstore.CompletePasswordReset.
func (s *store) CompletePasswordReset(ctx context.Context, userID, tokenHash, pwHash string, at time.Time) (string, int64, error) {
	if s.resets[tokenHash] != userID {
		return "", 0, models.ErrNotFound
	}
	delete(s.resets, tokenHash)
	u := s.users[userID]
	if u.EmailVerified == nil {
		if has, _ := s.HasSignInMethod(ctx, userID); has {
			owner := s.addUser(*u.Email, true)
			u.Email = nil
			s.passwords[owner.ID] = pwHash
			return owner.ID, 0, nil
		}
		u.EmailVerified = &at
	}
	s.passwords[userID] = pwHash
	s.revoked[userID] = at
	if s.committed != nil {
		s.committed()
	}
	return userID, 1, nil
}

func (s *store) PasswordHash(_ context.Context, userID string) (string, error) {
	if h, ok := s.passwords[userID]; ok {
		return h, nil
	}
	return "", models.ErrNotFound
}

func (s *store) ChangePassword(_ context.Context, userID, old, pwHash string, at time.Time) (int64, error) {
	if s.passwords[userID] != old {
		return 0, models.ErrConflict
	}
	s.passwords[userID] = pwHash
	s.revoked[userID] = at
	return 1, nil
}

func (s *store) AuthenticatorsOf(_ context.Context, userID string) ([]models.Authenticator, error) {
	var out []models.Authenticator
	for _, k := range s.passkeys {
		if k.UserID == userID {
			out = append(out, k)
		}
	}
	return out, nil
}

func (s *store) RenameAuthenticator(_ context.Context, userID, id, name string) error {
	k, ok := s.passkeys[id]
	if !ok || k.UserID != userID {
		return models.ErrNotFound
	}
	k.Name = name
	s.passkeys[id] = k
	return nil
}

func (s *store) RevokeSessions(ctx context.Context, userID string, at time.Time) (int64, error) {
	if err := ctx.Err(); err != nil { // as a database driver: a cancelled statement does not run
		return 0, err
	}
	s.revoked[userID] = at
	return 0, nil
}

func (s *store) DeleteUser(_ context.Context, userID string, at time.Time) (models.Deleted, error) {
	if _, ok := s.users[userID]; !ok {
		return models.Deleted{}, models.ErrNotFound
	}
	d := models.Deleted{Accounts: int64(len(s.accounts[userID]))}
	delete(s.users, userID)
	delete(s.accounts, userID)
	delete(s.passwords, userID)
	s.revoked[userID] = at
	return d, nil
}

// core is the part of the sign-in core the rules call.
type core struct {
	st       *store
	unlinked []string
}

func (c *core) UnlinkAccounts(ctx context.Context, userID string, offered signin.WaysOffered) (int64, bool, error) {
	if err := ctx.Err(); err != nil { // as a database driver
		return 0, false, err
	}
	w := c.st.waysOf(userID)
	w.Accounts = 0
	otherWay := offered.CanSignIn(w)
	c.unlinked = append(c.unlinked, fmt.Sprint(userID, " other:", otherWay))
	n := len(c.st.accounts[userID])
	delete(c.st.accounts, userID)
	return int64(n), !otherWay, nil
}

func (c *core) RemovePasskey(_ context.Context, userID, id string, offered signin.WaysOffered) error {
	k, ok := c.st.passkeys[id]
	if !ok || k.UserID != userID {
		return models.ErrNotFound
	}
	delete(c.st.passkeys, id)
	if !offered.CanSignIn(c.st.waysOf(userID)) {
		c.st.passkeys[id] = k
		return signin.ErrLastMethod
	}
	return nil
}

// waysOf is what models.Store.LockSignInWays reads.
func (s *store) waysOf(userID string) models.SignInWays {
	w := models.SignInWays{Accounts: int64(len(s.accounts[userID]))}
	if u := s.users[userID]; u != nil && u.Email != nil {
		w.Email, w.EmailVerified = *u.Email, u.EmailVerified != nil
	}
	for _, k := range s.passkeys {
		if k.UserID == userID {
			w.Passkeys++
		}
	}
	_, w.Password = s.passwords[userID]
	return w
}

// mailer keeps the e-mails it was asked to send: "kind to token".
type mailer struct {
	sent []string
	err  error
}

func (m *mailer) add(kind, to, token string) error {
	if m.err != nil {
		return m.err
	}
	m.sent = append(m.sent, strings.TrimSpace(kind+" "+to+" "+token))
	return nil
}

func (m *mailer) SignUpLink(_ context.Context, to, token string) error {
	return m.add("signup", to, token)
}
func (m *mailer) SignUpExisting(_ context.Context, to string) error { return m.add("existing", to, "") }
func (m *mailer) ResetLink(_ context.Context, to, token string) error {
	return m.add("reset", to, token)
}
func (m *mailer) ResetUnknown(_ context.Context, to string) error { return m.add("unknown", to, "") }
func (m *mailer) MethodAdded(ctx context.Context, to, p string) error {
	return m.notice(ctx, "added", to, p)
}

func (m *mailer) MethodRemoved(ctx context.Context, to, p string) error {
	return m.notice(ctx, "removed", to, p)
}
func (m *mailer) PasskeyChanged(ctx context.Context, to string, added bool) error {
	return m.notice(ctx, "passkey", to, fmt.Sprint("added:", added))
}
func (m *mailer) EmailChangeLink(_ context.Context, to, token string) error {
	return m.add("email-change", to, token)
}
func (m *mailer) EmailInUse(_ context.Context, to string) error { return m.add("email-in-use", to, "") }
func (m *mailer) EmailChanged(ctx context.Context, to, addr string) error {
	return m.notice(ctx, "email-changed", to, addr)
}
func (m *mailer) AccountDeleted(ctx context.Context, to string) error {
	return m.notice(ctx, "deleted", to, "")
}

func (m *mailer) TwoFactorChanged(ctx context.Context, to string, e accounts.TwoFactorEvent, left int) error {
	return m.notice(ctx, "two-factor", to, fmt.Sprint(e, left))
}

// notice is add for the notices of committed changes, failing as the
// real sender does in a cancelled context (its dial gives up at once).
func (m *mailer) notice(ctx context.Context, kind, to, token string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	return m.add(kind, to, token)
}

// token is the token of the last mail.
func (m *mailer) token(t *testing.T) string {
	t.Helper()
	if len(m.sent) == 0 {
		t.Fatal("no e-mail sent")
	}
	f := strings.Fields(m.sent[len(m.sent)-1])
	return f[len(f)-1]
}

// throttles is an always-empty signin.Throttles; down makes it fail.
type throttles struct{ down bool }

func (t *throttles) PasswordThrottles(context.Context, time.Time, ...string) (map[string]throttlestore.PasswordThrottle, error) {
	if t.down {
		return nil, errors.New("throttle table down")
	}
	return map[string]throttlestore.PasswordThrottle{}, nil
}
func (t *throttles) RecordPasswordFailure(context.Context, time.Time, string, time.Duration) (int, error) {
	return 1, nil
}
func (t *throttles) ClaimPasswordBucket(context.Context, string, time.Time, time.Time) (bool, error) {
	return true, nil
}
func (t *throttles) ForgetPasswordFailure(context.Context, string) error         { return nil }
func (t *throttles) MarkPasswordBucket(context.Context, string, time.Time) error { return nil }
func (t *throttles) ClearPasswordThrottles(context.Context, ...string) error     { return nil }

// world is a Service over fakes.
type world struct {
	st     *store
	core   *core
	mail   *mailer
	thr    *throttles
	ended  []time.Time
	rules  *accounts.Service
	secret string
}

func newWorld() *world {
	w := &world{st: newStore(), mail: &mailer{}, thr: &throttles{}, secret: "s1"}
	w.core = &core{st: w.st}
	w.rules = &accounts.Service{
		Store:         w.st,
		Flows:         w.st,
		Passkeys:      w.st,
		Core:          w.core,
		Hooks:         signin.DefaultHooks(config.Callbacks{}),
		Provider:      "credentials",
		Offered:       accounts.Offered{Passwords: true, Email: true, Passkeys: true},
		Hasher:        fastHasher(),
		Policy:        password.NewPolicy(),
		Throttle:      signin.NewThrottle(w.thr),
		Mail:          w.mail,
		Hashes:        func(v string) []string { return []string{"h(" + v + "|" + w.secret + ")"} },
		SessionsEnded: func(_ context.Context, at time.Time) { w.ended = append(w.ended, at) },
		Now:           func() time.Time { return now },
		Log:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	return w
}

// fastHasher keeps the tests in milliseconds.
func fastHasher() *password.Hasher {
	h, err := password.New(password.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})
	if err != nil {
		panic(err)
	}
	return h
}
