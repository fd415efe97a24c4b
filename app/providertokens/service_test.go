package providertokens

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/storetest"
	"github.com/latchkey-auth/latchkey/models/tokenstore"
)

// The rules on a real store, both dialects; the provider is a counting
// stand-in (test/refreshidp and the app's tests use a real IdP).

const (
	secretA = "secret-A-0123456789abcdef0123456789abcdef"
	secretB = "secret-B-0123456789abcdef0123456789abcdef"
)

// provider rotates refresh tokens: each is good once.
type provider struct {
	mu    sync.Mutex
	live  map[string]bool
	calls atomic.Int64
	delay time.Duration
	n     int
	// life is how long the tokens it issues live; 0: an hour.
	life time.Duration
}

func (p *provider) Refresh(_ context.Context, _, rt string) (*oauth2.Token, error) {
	p.calls.Add(1)
	time.Sleep(p.delay)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live[rt] {
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant"}
	}
	delete(p.live, rt)
	p.n++
	next := fmt.Sprintf("rt-%d", p.n)
	p.live[next] = true
	life := p.life
	if life == 0 {
		life = time.Hour
	}
	return &oauth2.Token{AccessToken: fmt.Sprintf("at-%d", p.n), RefreshToken: next, Expiry: time.Now().Add(life)}, nil
}

func service(t *testing.T, s *models.Store, p Refresher, secrets ...string) *Service {
	t.Helper()
	svc, err := New(tokenstore.New(s), p, Config{Providers: []string{"idp"}, Secrets: secrets, Skew: time.Minute, Wait: 10 * time.Second})
	require.NoError(t, err)
	return svc
}

// signedIn stores a user with an idp account and keeps tokens expiring at exp.
func signedIn(t *testing.T, s *models.Store, svc *Service, exp time.Time) string {
	t.Helper()
	u := storetest.NewUser(t, s, "")
	require.NoError(t, s.LinkAccount(context.Background(), &models.Account{UserID: u.ID, Type: "oidc", Provider: "idp", ProviderAccountID: "sub-" + u.ID}))
	require.NoError(t, svc.Keep(context.Background(), "idp", "sub-"+u.ID, &oauth2.Token{AccessToken: "at-0", RefreshToken: "rt-0", Expiry: exp}, "idt-0"))
	return u.ID
}

// Two services on one database are two instances: concurrent calls on both
// for an expired token refresh once, and all get its token.
func TestOneRefreshAcrossInstances(t *testing.T) {
	storetest.EachDialect(t, postgresURL, func(t *testing.T, c models.Config) {
		s1, s2 := storetest.Connect(t, c), storetest.Connect(t, c)
		p := &provider{live: map[string]bool{"rt-0": true}, delay: 300 * time.Millisecond}
		a, b := service(t, s1, p, secretA), service(t, s2, p, secretA)
		user := signedIn(t, s1, a, time.Now().Add(-time.Minute))
		got := make([]string, 40)
		var wg sync.WaitGroup
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				svc := a
				if i%2 == 1 {
					svc = b
				}
				tok, err := svc.Token(context.Background(), user, "idp")
				if err == nil {
					got[i] = tok.AccessToken
				} else {
					got[i] = err.Error()
				}
			}()
		}
		wg.Wait()
		require.EqualValues(t, 1, p.calls.Load())
		for _, g := range got {
			require.Equal(t, "at-1", g)
		}
		acc, err := tokenstore.New(s1).Account(context.Background(), user, "idp")
		require.NoError(t, err)
		require.Nil(t, acc.RefreshLeaseOwner, "the lease ended with the save")
		set, _, err := a.openSet(acc)
		require.NoError(t, err)
		require.Equal(t, "rt-1", *set.refresh, "the rotated refresh token was saved in the same step")
		require.Equal(t, "idt-0", *set.id, "kept when the refresh gives none")
	})
}

// Tokens sealed under the old secret open after AUTH_SECRET_1 is added,
// and are sealed again under it, so the old secret can then go.
func TestSecretRotation(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) {
		p := &provider{live: map[string]bool{}}
		old := service(t, s, p, secretA)
		user := signedIn(t, s, old, time.Now().Add(time.Hour))
		before, err := tokenstore.New(s).Account(context.Background(), user, "idp")
		require.NoError(t, err)

		_, err = service(t, s, p, secretB).Token(context.Background(), user, "idp")
		require.ErrorIs(t, err, ErrRefreshFailed, "the new secret alone cannot open them")

		rotated := service(t, s, p, secretB, secretA)
		tok, err := rotated.Token(context.Background(), user, "idp")
		require.NoError(t, err)
		require.Equal(t, "at-0", tok.AccessToken)
		after, err := tokenstore.New(s).Account(context.Background(), user, "idp")
		require.NoError(t, err)
		require.NotEqual(t, *before.AccessToken, *after.AccessToken, "sealed again")
		require.NotEqual(t, *before.RefreshToken, *after.RefreshToken)

		tok, err = service(t, s, p, secretB).Token(context.Background(), user, "idp")
		require.NoError(t, err, "the old secret is no longer needed")
		require.Equal(t, "at-0", tok.AccessToken)
		require.Zero(t, p.calls.Load())
	})
}

// The start-up step seals the plaintext tokens of providers that keep
// them, clears the others', and is idempotent.
func TestSettle(t *testing.T) {
	storetest.EachDialect(t, postgresURL, func(t *testing.T, c models.Config) {
		s := storetest.Connect(t, c)
		ctx := context.Background()
		plain := func(provider, token string) string {
			u := storetest.NewUser(t, s, "")
			at, rt, idt := "at-"+token, "rt-"+token, "idt-"+token
			require.NoError(t, s.LinkAccount(ctx, &models.Account{UserID: u.ID, Type: "oidc", Provider: provider, ProviderAccountID: u.ID,
				AccessToken: &at, RefreshToken: &rt, IDToken: &idt}))
			return u.ID
		}
		kept, dropped := plain("idp", "kept-secret-value"), plain("github", "dropped-secret-value")
		plain("idp", "second-kept-value")
		require.NoError(t, s.DB().Exec("UPDATE accounts SET token_error = 'RefreshAccessTokenError'").Error)
		svc := service(t, s, &provider{live: map[string]bool{}}, secretA)
		sealed, cleared, err := svc.Settle(ctx)
		require.NoError(t, err)
		require.Equal(t, [2]int{2, 1}, [2]int{sealed, cleared})
		sealed, cleared, err = svc.Settle(ctx)
		require.NoError(t, err)
		require.Equal(t, [2]int{0, 0}, [2]int{sealed, cleared}, "idempotent")

		mark, err := svc.SessionError(ctx, dropped)
		require.NoError(t, err)
		require.Empty(t, mark, "store_tokens off: no mark")
		mark, err = svc.SessionError(ctx, kept)
		require.NoError(t, err)
		require.Equal(t, RefreshError, mark, "a provider that keeps tokens keeps its mark")
		require.NoError(t, s.DB().Exec("UPDATE accounts SET token_error = NULL").Error)
		tok, err := svc.Token(ctx, kept, "idp")
		require.NoError(t, err)
		require.Equal(t, "at-kept-secret-value", tok.AccessToken)
		acc, err := tokenstore.New(s).Account(ctx, dropped, "github")
		require.NoError(t, err)
		require.Nil(t, acc.AccessToken)
		require.Nil(t, acc.RefreshToken)
		require.Nil(t, acc.IDToken)

		if c.Dialect == models.DialectSQLite {
			var file []byte
			for _, f := range []string{c.DSN, c.DSN + "-wal"} {
				b, _ := os.ReadFile(f)
				file = append(file, b...)
			}
			require.NotEmpty(t, file)
			for _, v := range []string{"kept-secret-value", "dropped-secret-value", "second-kept-value"} {
				require.False(t, strings.Contains(string(file), v), "%s is in the SQLite file", v)
			}
		} else {
			var rows []string
			require.NoError(t, s.DB().Raw("SELECT CAST(a AS text) FROM accounts a").Scan(&rows).Error)
			require.False(t, strings.Contains(strings.Join(rows, "\n"), "secret-value"), "a plaintext token in the rows")
		}
	})
}

// A revoked grant marks the account once; the mark is what the session
// reports, and a sign-in with the provider clears it.
func TestRevokedMarksAccount(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) {
		p := &provider{live: map[string]bool{}} // rt-0 is not live: revoked
		svc := service(t, s, p, secretA)
		user := signedIn(t, s, svc, time.Now())
		ctx := context.Background()
		_, err := svc.Token(ctx, user, "idp")
		require.True(t, errors.Is(err, ErrRefreshFailed), "%v", err)
		mark, err := svc.SessionError(ctx, user)
		require.NoError(t, err)
		require.Equal(t, RefreshError, mark)
		_, err = svc.Token(ctx, user, "idp")
		require.ErrorIs(t, err, ErrRefreshFailed)
		require.EqualValues(t, 1, p.calls.Load())

		require.NoError(t, svc.Keep(ctx, "idp", "sub-"+user, &oauth2.Token{AccessToken: "at-new", Expiry: time.Now().Add(time.Hour)}, ""))
		mark, err = svc.SessionError(ctx, user)
		require.NoError(t, err)
		require.Empty(t, mark)
		tok, err := svc.Token(ctx, user, "idp")
		require.NoError(t, err)
		require.Equal(t, "at-new", tok.AccessToken)
	})
}

// A user with two identities at one provider (two logins linked): GET
// /token answers the earliest linked one's token, every time, and a
// refresh writes that row, not the other; an identity with no token kept
// (linked before store_tokens) gives way to one that has a token.
func TestTwoIdentitiesAtOneProvider(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := &provider{live: map[string]bool{"rt-home": true, "rt-work": true}}
		svc := service(t, s, p, secretA)
		u := storetest.NewUser(t, s, "")
		// work is stored first, but home was linked a day earlier.
		linked := time.Now().Truncate(time.Second)
		require.NoError(t, s.LinkAccount(ctx, &models.Account{UserID: u.ID, Type: "oidc", Provider: "idp", ProviderAccountID: "work", CreatedAt: linked}))
		require.NoError(t, s.LinkAccount(ctx, &models.Account{UserID: u.ID, Type: "oidc", Provider: "idp", ProviderAccountID: "home", CreatedAt: linked.Add(-24 * time.Hour)}))
		require.NoError(t, svc.Keep(ctx, "idp", "work", &oauth2.Token{AccessToken: "at-work", RefreshToken: "rt-work", Expiry: time.Now().Add(time.Hour)}, ""))
		require.NoError(t, svc.Keep(ctx, "idp", "home", &oauth2.Token{AccessToken: "at-home", RefreshToken: "rt-home", Expiry: time.Now().Add(-time.Minute)}, ""))

		tok, err := svc.Token(ctx, u.ID, "idp")
		require.NoError(t, err)
		require.Equal(t, "at-1", tok.AccessToken, "home's token, refreshed: home was linked first")
		tok, err = svc.Token(ctx, u.ID, "idp")
		require.NoError(t, err)
		require.Equal(t, "at-1", tok.AccessToken, "the same identity again")
		require.EqualValues(t, 1, p.calls.Load())

		store := tokenstore.New(s)
		for identity, want := range map[string][2]string{"home": {"at-1", "rt-1"}, "work": {"at-work", "rt-work"}} {
			acc, err := store.AccountByIdentity(ctx, "idp", identity)
			require.NoError(t, err)
			set, _, err := svc.openSet(acc)
			require.NoError(t, err)
			require.Equal(t, want, [2]string{*set.access, *set.refresh}, "%s's row", identity)
			require.Nil(t, acc.RefreshLeaseOwner)
		}

		// Another user's first identity was linked before store_tokens.
		v := storetest.NewUser(t, s, "")
		require.NoError(t, s.LinkAccount(ctx, &models.Account{UserID: v.ID, Type: "oidc", Provider: "idp", ProviderAccountID: "old", CreatedAt: linked.Add(-time.Hour)}))
		require.NoError(t, s.LinkAccount(ctx, &models.Account{UserID: v.ID, Type: "oidc", Provider: "idp", ProviderAccountID: "new", CreatedAt: linked}))
		require.NoError(t, svc.Keep(ctx, "idp", "new", &oauth2.Token{AccessToken: "at-new", Expiry: time.Now().Add(time.Hour)}, ""))
		tok, err = svc.Token(ctx, v.ID, "idp")
		require.NoError(t, err)
		require.Equal(t, "at-new", tok.AccessToken)
	})
}

// A sign-in whose token response carries no refresh token (Google's, and
// most providers', after the first consent) keeps the refresh token the
// account holds: dropped, the access token could not be refreshed an hour
// later, and signing in again would never bring one back. A refresh token
// the provider has refused (the account is marked) is not kept.
func TestSignInWithoutRefreshTokenKeepsTheStoredOne(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		p := &provider{live: map[string]bool{"rt-0": true}}
		svc := service(t, s, p, secretA)
		user := signedIn(t, s, svc, time.Now().Add(time.Hour))
		// The user signs in again; the new access token has expired by the time the app asks.
		require.NoError(t, svc.Keep(ctx, "idp", "sub-"+user, &oauth2.Token{AccessToken: "at-again", Expiry: time.Now().Add(-time.Minute)}, ""))
		tok, err := svc.Token(ctx, user, "idp")
		require.NoError(t, err)
		require.Equal(t, "at-1", tok.AccessToken, "refreshed with the refresh token of the first sign-in")
		require.EqualValues(t, 1, p.calls.Load())

		// rt-1 is revoked at the provider: the account is marked, and a
		// sign-in without a refresh token does not bring the refused one back.
		p.mu.Lock()
		clear(p.live)
		p.mu.Unlock()
		require.NoError(t, svc.Keep(ctx, "idp", "sub-"+user, &oauth2.Token{AccessToken: "at-x", RefreshToken: "rt-1", Expiry: time.Now().Add(-time.Minute)}, ""))
		_, err = svc.Token(ctx, user, "idp")
		require.ErrorIs(t, err, ErrRefreshFailed)
		require.NoError(t, svc.Keep(ctx, "idp", "sub-"+user, &oauth2.Token{AccessToken: "at-y", Expiry: time.Now().Add(-time.Minute)}, ""))
		_, err = svc.Token(ctx, user, "idp")
		require.ErrorIs(t, err, ErrRefreshFailed)
		require.EqualValues(t, 2, p.calls.Load(), "the refused refresh token is not spent again")
	})
}

// flakyStore is the real store whose first SaveRefreshed fails, as a
// database hiccup would, before writing anything.
type flakyStore struct {
	*tokenstore.Store
	failed atomic.Bool
}

func (f *flakyStore) SaveRefreshed(ctx context.Context, id, owner string, t tokenstore.Sealed) (bool, error) {
	if f.failed.CompareAndSwap(false, true) {
		return false, errors.New("connection reset by peer")
	}
	return f.Store.SaveRefreshed(ctx, id, owner, t)
}

// lateProvider answers the refresh just as the call's deadline strikes:
// after a long wait for another refresh, a slow provider.
type lateProvider struct{ provider }

func (p *lateProvider) Refresh(ctx context.Context, provider, rt string) (*oauth2.Token, error) {
	<-ctx.Done()
	return p.provider.Refresh(context.Background(), provider, rt)
}

// The rotated refresh token a refresh got is saved though the database
// failed once, and though the request's time ran out while the provider
// answered: lost, the next refresh would spend the old one, refused
// (invalid_grant), and the user be marked.
func TestRefreshedTokensAreSaved(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) {
		// The call's time: ample for the hiccup; for the late provider,
		// what it waits out, yet room for the lookups before it on a
		// loaded machine (20 ms failed both cases there: "find account:
		// context deadline exceeded").
		for _, c := range []struct {
			name  string
			store Store
			p     Refresher
			call  time.Duration
		}{
			{"a database hiccup", &flakyStore{Store: tokenstore.New(s)}, &provider{live: map[string]bool{"rt-0": true}}, 10 * time.Second},
			{"a late provider", tokenstore.New(s), &lateProvider{provider{live: map[string]bool{"rt-0": true}}}, 300 * time.Millisecond},
		} {
			t.Run(c.name, func(t *testing.T) { refreshSaved(t, s, c.store, c.p, c.call) })
		}
	})
}

func refreshSaved(t *testing.T, s *models.Store, store Store, p Refresher, call time.Duration) {
	ctx := context.Background()
	svc, err := New(store, p, Config{Providers: []string{"idp"}, Secrets: []string{secretA}, Skew: time.Minute,
		Wait: time.Millisecond, CallTimeout: call})
	require.NoError(t, err)
	user := signedIn(t, s, svc, time.Now().Add(-time.Minute))
	tok, err := svc.Token(ctx, user, "idp")
	require.NoError(t, err)
	require.Equal(t, "at-1", tok.AccessToken)
	acc, err := tokenstore.New(s).Account(ctx, user, "idp")
	require.NoError(t, err)
	set, _, err := svc.openSet(acc)
	require.NoError(t, err)
	require.Equal(t, "rt-1", *set.refresh, "the rotated refresh token is saved")
	require.Nil(t, acc.RefreshLeaseOwner)
}

// gatedProvider holds each refresh until released, telling when one started.
type gatedProvider struct {
	*provider
	started, release chan struct{}
}

func (p *gatedProvider) Refresh(ctx context.Context, provider, rt string) (*oauth2.Token, error) {
	p.started <- struct{}{}
	<-p.release
	return p.provider.Refresh(ctx, provider, rt)
}

// readStore tells when it first read a user's account.
type readStore struct {
	*tokenstore.Store
	once sync.Once
	read chan struct{}
}

func (r *readStore) Account(ctx context.Context, userID, provider string) (*tokenstore.Account, error) {
	acc, err := r.Store.Account(ctx, userID, provider)
	r.once.Do(func() { close(r.read) })
	return acc, err
}

// A provider whose tokens live less than refresh_skew: a request that
// waited on another instance's refresh takes its token, however soon it
// expires, instead of refreshing again as soon as the lease ends.
func TestWaiterTakesAShortLivedRefresh(t *testing.T) {
	storetest.EachDialect(t, postgresURL, func(t *testing.T, c models.Config) {
		s1, s2 := storetest.Connect(t, c), storetest.Connect(t, c)
		p := &gatedProvider{provider: &provider{live: map[string]bool{"rt-0": true}, life: 30 * time.Second},
			started: make(chan struct{}, 2), release: make(chan struct{})}
		a := service(t, s1, p, secretA)
		watched := &readStore{Store: tokenstore.New(s2), read: make(chan struct{})}
		b, err := New(watched, p, Config{Providers: []string{"idp"}, Secrets: []string{secretA}, Skew: time.Minute, Wait: 10 * time.Second})
		require.NoError(t, err)
		user := signedIn(t, s1, a, time.Now().Add(-time.Minute))

		got := make(chan string, 2)
		ask := func(svc *Service) {
			tok, err := svc.Token(context.Background(), user, "idp")
			if err != nil {
				got <- err.Error()
				return
			}
			got <- tok.AccessToken
		}
		go ask(a)
		<-p.started // a holds the lease and calls the provider
		go ask(b)
		<-watched.read // b read the expired token: it waits for a's refresh
		close(p.release)
		require.Equal(t, []string{"at-1", "at-1"}, []string{<-got, <-got})
		require.EqualValues(t, 1, p.calls.Load(), "one refresh")
	})
}

// A sign-in while a refresh is at the provider: the sign-in's tokens win
// (they are the newer), but when it brought no refresh token the one the
// refresh rotated to is kept, not the one the provider has just spent.
func TestSignInDuringRefresh(t *testing.T) {
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		for _, c := range []struct{ name, signInRefresh, want string }{
			{"without a refresh token", "", "rt-1"},
			{"with a refresh token", "rt-signin", "rt-signin"},
		} {
			p := &gatedProvider{provider: &provider{live: map[string]bool{"rt-0": true}}, started: make(chan struct{}, 2), release: make(chan struct{})}
			svc := service(t, s, p, secretA)
			user := signedIn(t, s, svc, time.Now().Add(-time.Minute))
			got := make(chan error, 1)
			go func() {
				_, err := svc.Token(ctx, user, "idp")
				got <- err
			}()
			<-p.started
			require.NoError(t, svc.Keep(ctx, "idp", "sub-"+user, &oauth2.Token{AccessToken: "at-signin", RefreshToken: c.signInRefresh, Expiry: time.Now().Add(-time.Second)}, ""))
			close(p.release)
			require.NoError(t, <-got, c.name)

			acc, err := tokenstore.New(s).Account(ctx, user, "idp")
			require.NoError(t, err)
			set, _, err := svc.openSet(acc)
			require.NoError(t, err)
			require.Equal(t, [2]string{"at-signin", c.want}, [2]string{*set.access, *set.refresh}, c.name)
			if c.want == "rt-1" {
				// The sign-in's token has expired: the kept rotated one refreshes it.
				tok, err := svc.Token(ctx, user, "idp")
				require.NoError(t, err)
				require.Equal(t, "at-2", tok.AccessToken)
			}
		}
	})
}
