package signin_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// store is an in-memory Users and Tokens with the same conflict and
// not-found answers as models.Store, and switches to make a step fail.
type store struct {
	mu       sync.Mutex
	users    map[string]*models.User
	accounts map[string]*models.Account // provider|providerAccountID
	tokens   map[string]models.VerificationToken
	nextID   int

	failLink, failCreate, failRestore error
}

func newStore() *store {
	return &store{users: map[string]*models.User{}, accounts: map[string]*models.Account{}, tokens: map[string]models.VerificationToken{}}
}

func (s *store) addUser(email string) *models.User {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	u := &models.User{ID: fmt.Sprint("u", s.nextID)}
	if email != "" {
		u.Email = &email
	}
	s.users[u.ID] = u
	return u
}

func (s *store) UserByID(_ context.Context, id string) (*models.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[id]; ok {
		return u, nil
	}
	return nil, models.ErrNotFound
}

func (s *store) UserByEmail(_ context.Context, email string) (*models.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if u.Email != nil && strings.EqualFold(*u.Email, email) {
			return u, nil
		}
	}
	return nil, models.ErrNotFound
}

func (s *store) UserByAccount(_ context.Context, provider, id string) (*models.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if acc, ok := s.accounts[provider+"|"+id]; ok {
		return s.users[acc.UserID], nil
	}
	return nil, models.ErrNotFound
}

func (s *store) AccountsOf(_ context.Context, userID string) ([]models.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []models.Account
	for _, acc := range s.accounts {
		if acc.UserID == userID {
			out = append(out, *acc)
		}
	}
	slices.SortFunc(out, func(a, b models.Account) int { return a.CreatedAt.Compare(b.CreatedAt) }) // oldest first, as the store
	return out, nil
}

// UnlinkAccounts unlinks as models.Store does, the ways left read from the
// user's address (this fake keeps no passkeys or passwords).
func (s *store) UnlinkAccounts(_ context.Context, userID string, otherWay func(models.SignInWays) bool) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w models.SignInWays
	if u := s.users[userID]; u != nil && u.Email != nil {
		w.Email, w.EmailVerified = *u.Email, u.EmailVerified != nil
	}
	keep, kept := "", false
	if !otherWay(w) {
		var oldest *models.Account
		for _, acc := range s.accounts {
			if acc.UserID == userID && (oldest == nil || acc.CreatedAt.Before(oldest.CreatedAt)) {
				oldest = acc
			}
		}
		if oldest != nil {
			keep, kept = oldest.ID, true
		}
	}
	var n int64
	for key, acc := range s.accounts {
		if acc.UserID == userID && acc.ID != keep {
			delete(s.accounts, key)
			n++
		}
	}
	return n, kept, nil
}

// stamp gives a new account row an id and a creation time after every
// earlier one's (the caller holds mu).
func (s *store) stamp(acc *models.Account) {
	s.nextID++
	if acc.ID == "" {
		acc.ID = fmt.Sprint("a", s.nextID)
	}
	acc.CreatedAt = now.Add(time.Duration(s.nextID) * time.Second)
}

// HasSignInMethod: the fake keeps accounts only (no passkeys or passwords).
func (s *store) HasSignInMethod(ctx context.Context, userID string) (bool, error) {
	accounts, err := s.AccountsOf(ctx, userID)
	return len(accounts) > 0, err
}

func (s *store) LinkAccount(_ context.Context, acc *models.Account) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failLink != nil {
		return s.failLink
	}
	key := acc.Provider + "|" + acc.ProviderAccountID
	if _, ok := s.accounts[key]; ok {
		return models.ErrConflict
	}
	s.stamp(acc)
	s.accounts[key] = acc
	return nil
}

func (s *store) CreateUserWithAccount(ctx context.Context, u *models.User, acc *models.Account) error {
	if s.failCreate != nil {
		return s.failCreate
	}
	if u.Email != nil {
		if _, err := s.UserByEmail(ctx, *u.Email); err == nil {
			return models.ErrConflict
		}
	}
	s.mu.Lock()
	if _, ok := s.accounts[acc.Provider+"|"+acc.ProviderAccountID]; ok {
		s.mu.Unlock()
		return models.ErrConflict
	}
	s.nextID++
	u.ID = fmt.Sprint("u", s.nextID)
	s.users[u.ID] = u
	acc.UserID = u.ID
	s.stamp(acc)
	s.accounts[acc.Provider+"|"+acc.ProviderAccountID] = acc
	s.mu.Unlock()
	return nil
}

func (s *store) CreateVerificationToken(_ context.Context, identifier, hash string, expires time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failRestore != nil {
		return s.failRestore
	}
	if _, ok := s.tokens[hash]; ok {
		return models.ErrConflict
	}
	s.tokens[hash] = models.VerificationToken{Identifier: identifier, TokenHash: hash, Expires: expires}
	return nil
}

func (s *store) DeleteVerificationToken(_ context.Context, identifier, hash string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[hash]; ok && t.Identifier == identifier {
		delete(s.tokens, hash)
	}
	return nil
}

func (s *store) VerificationTokenByHash(_ context.Context, hash string) (*models.VerificationToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[hash]; ok {
		return &t, nil
	}
	return nil, models.ErrNotFound
}

func (s *store) RedeemVerificationToken(ctx context.Context, identifier, hash string, now time.Time) (*models.User, bool, error) {
	s.mu.Lock()
	t, ok := s.tokens[hash]
	if !ok || t.Identifier != identifier || !t.Expires.After(now) {
		s.mu.Unlock()
		return nil, false, models.ErrNotFound
	}
	delete(s.tokens, hash)
	s.mu.Unlock()
	if u, err := s.UserByEmail(ctx, identifier); err == nil {
		// models.releaseUnproved: an unverified claimant with another
		// way to sign in loses the address to the owner's proof.
		if has, _ := s.HasSignInMethod(ctx, u.ID); u.EmailVerified == nil && has {
			s.mu.Lock()
			u.Email = nil
			s.mu.Unlock()
		} else {
			u.EmailVerified = &now
			return u, false, nil
		}
	}
	u := s.addUser(identifier)
	u.EmailVerified = &now
	return u, true, nil
}

// browser is a fake signin.Browser: the signed-in user and when that
// session signed in, the sessions it was given and the sessions it ended.
type browser struct {
	user      string
	since     time.Time
	readErr   error
	startErr  error
	started   []session.User
	claims    []map[string]any
	endedUser []string
}

func (b *browser) SignedInUser(context.Context) (string, error) { return b.user, b.readErr }

func (b *browser) SignedInMethods(context.Context) (string, []string, error) {
	return b.user, nil, b.readErr
}

func (b *browser) Cookie(string) string { return "" }

func (b *browser) SignedInSince(context.Context) (string, time.Time, error) {
	return b.user, b.since, b.readErr
}

func (b *browser) StartSession(_ context.Context, u session.User, claims map[string]any) error {
	if b.startErr != nil {
		return b.startErr
	}
	b.started = append(b.started, u)
	b.claims = append(b.claims, claims)
	b.user, b.since = u.ID, now
	return nil
}

func (b *browser) EndSession(context.Context) error {
	b.endedUser = append(b.endedUser, b.user)
	b.user = ""
	return nil
}

// mailer keeps the links it was asked to send.
type mailer struct {
	links []string
	err   error
}

func (m *mailer) SendLink(_ context.Context, to, link string) error {
	if m.err != nil {
		return m.err
	}
	m.links = append(m.links, to+" "+link)
	return nil
}

var errBoom = errors.New("boom")

var now = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// service is a Service over st with the default hooks and a fixed clock.
func service(st *store) *signin.Service {
	return &signin.Service{
		Users:        st,
		Tokens:       st,
		Hooks:        signin.DefaultHooks(config.Callbacks{}),
		Now:          func() time.Time { return now },
		TokenHashes:  func(token string) []string { return []string{"hash:" + token} },
		ReauthWindow: 10 * time.Minute,
		Log:          slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// requireCode fails unless err is a *signin.Error with code.
func requireCode(t *testing.T, err error, code signin.Code) {
	t.Helper()
	var e *signin.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *signin.Error with code %s, got %v", code, err)
	}
	if e.Code != code {
		t.Fatalf("want code %s, got %s (%v)", code, e.Code, e.Cause)
	}
}
