package providertokens

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models/tokenstore"
)

// The errors the handler answers; each names the documented code.
var (
	// ErrNotStored: the provider does not keep tokens (store_tokens off),
	// or the user has no account with it, or the account holds no token.
	ErrNotStored = errors.New("TokensNotStored")
	// ErrRefreshFailed: the provider refused the refresh token
	// (invalid_grant) or there is none to refresh with; the account is
	// marked until the user signs in with the provider again.
	ErrRefreshFailed = errors.New("RefreshAccessTokenError")
	// ErrProviderDown: the provider's token endpoint failed otherwise
	// (unreachable, 5xx); nothing is marked, a later call retries.
	ErrProviderDown = errors.New("provider token endpoint unavailable")
	// ErrBusy: another request held the account's refresh for longer
	// than tokens.refresh_wait.
	ErrBusy = errors.New("refresh still running elsewhere")
)

// RefreshError is the mark a refused refresh leaves on the account, as
// GET /session reports it: next-auth's rotation guide's name.
const RefreshError = "RefreshAccessTokenError"

// Store is the token storage (models/tokenstore.Store).
type Store interface {
	// Account is the user's account at provider; of several, the earliest
	// linked whose token can be served, else the earliest linked.
	Account(ctx context.Context, userID, provider string) (*tokenstore.Account, error)
	AccountByID(ctx context.Context, id string) (*tokenstore.Account, error)
	AccountByIdentity(ctx context.Context, provider, providerAccountID string) (*tokenstore.Account, error)
	TakeLease(ctx context.Context, id, owner string, now, until time.Time) (bool, error)
	SaveRefreshed(ctx context.Context, id, owner string, t tokenstore.Sealed) (bool, error)
	EndLease(ctx context.Context, id, owner, mark string) error
	Keep(ctx context.Context, id string, t tokenstore.Sealed) error
	Replace(ctx context.Context, id string, old, next tokenstore.Sealed) (bool, error)
	TokenError(ctx context.Context, userID string) (string, error)
	Unsettled(ctx context.Context, keep []string, prefix, after string, n int) ([]tokenstore.Account, error)
	// Erase makes what Replace overwrote unreadable from the database
	// file (SQLite's free pages and log).
	Erase(ctx context.Context) error
	ClearMarks(ctx context.Context, keep []string) (int64, error)
}

// Refresher spends a refresh token at a provider's token endpoint
// (app/oauthflow's clients). The error of a refusal is the provider's
// *oauth2.RetrieveError.
type Refresher interface {
	Refresh(ctx context.Context, provider, refreshToken string) (*oauth2.Token, error)
}

// Token is what the app gets: the access token and what it needs to use it.
type Token struct {
	AccessToken string
	TokenType   string
	// ExpiresAt is epoch seconds; 0 when the provider gave no expiry.
	ExpiresAt int64
	Scope     string
}

// Config is the service's settings.
type Config struct {
	// Providers keep tokens: the ids with store_tokens on.
	Providers []string
	Secrets   []string
	// Skew: a token expiring within it is refreshed first.
	Skew time.Duration
	// Wait bounds the wait for another request's refresh.
	Wait time.Duration
	// CallTimeout bounds the provider's token endpoint call; 0: 20 s.
	// A field, not a constant, so a test can run past it without waiting.
	CallTimeout time.Duration
	Now         func() time.Time
	Log         *slog.Logger
}

// Service keeps and hands out provider tokens.
type Service struct {
	store     Store
	refresher Refresher
	seal      sealer
	keeps     map[string]bool
	cfg       Config
	// owner names this process's leases (random per process).
	owner string
	// flights collapse one process's requests for one account.
	flights singleflight.Group
	// marks cache the users' marks for GET /session.
	marks marks
}

// leaseMargin is how much longer than the call it covers (CallTimeout) a
// lease holds the refresh, so it expires only when its holder died.
const (
	leaseMargin = 10 * time.Second
	callTimeout = 20 * time.Second
	// pollEvery is how often a request waiting for another's refresh
	// reads the row.
	pollEvery = 50 * time.Millisecond
)

// New builds the service.
func New(store Store, refresher Refresher, cfg Config) (*Service, error) {
	seal, err := newSealer(cfg.Secrets)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = callTimeout
	}
	s := &Service{store: store, refresher: refresher, seal: seal, keeps: map[string]bool{}, cfg: cfg, owner: random.Hex(16)}
	for _, p := range cfg.Providers {
		s.keeps[p] = true
	}
	return s, nil
}

// Keep stores the tokens of a sign-in with provider on the identity's
// account, sealed, and clears its mark: the user signed in again. Nothing
// for a provider without store_tokens.
func (s *Service) Keep(ctx context.Context, provider, providerAccountID string, tok *oauth2.Token, idToken string) error {
	if !s.keeps[provider] || tok == nil {
		return nil
	}
	acc, err := s.store.AccountByIdentity(ctx, provider, providerAccountID)
	if err != nil {
		return fmt.Errorf("keep %s tokens: %w", provider, err)
	}
	t, err := s.sealSet(acc.ID, tokenSet(tok, idToken, s.keptRefresh(acc, tok), s.cfg.Now()))
	if err != nil {
		return err
	}
	defer s.marks.forget(acc.UserID)
	return s.store.Keep(ctx, acc.ID, t)
}

// keptRefresh is what of acc's stored tokens a sign-in's set keeps: the
// refresh token, when the sign-in brought none. Google, and most
// providers, issue one at the first consent only; dropped, the access
// token could not be refreshed once it expired, and no later sign-in
// would bring one back (Google: "if your application loses the refresh
// token, it will have to re-prompt the user for consent"). Not one the
// provider refused (the account is marked), nor one that does not open.
func (s *Service) keptRefresh(acc *tokenstore.Account, tok *oauth2.Token) *set {
	if tok.RefreshToken != "" || acc.TokenError != nil || acc.RefreshToken == nil {
		return nil
	}
	rt, _, err := s.seal.open(acc.ID, colRefresh, acc.RefreshToken)
	if err != nil {
		return nil
	}
	return &set{refresh: &rt}
}

// Token is the user's access token at provider, refreshed first when it
// expires within the skew; concurrent calls for one account share one
// refresh (see the package doc).
func (s *Service) Token(ctx context.Context, userID, provider string) (Token, error) {
	if !s.keeps[provider] {
		return Token{}, ErrNotStored
	}
	// The flight outlives a caller that leaves: the others wait on it.
	flightCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Wait+s.cfg.CallTimeout)
	defer cancel()
	v, err, _ := s.flights.Do(userID+"\x00"+provider, func() (any, error) { return s.fetch(flightCtx, userID, provider) })
	if err != nil {
		return Token{}, err
	}
	return v.(Token), nil
}

// fetch answers the stored token when fresh; else it takes the account's
// lease and refreshes, or waits for the holder's result.
func (s *Service) fetch(ctx context.Context, userID, provider string) (Token, error) {
	deadline := s.cfg.Now().Add(s.cfg.Wait)
	// seen is the access token as the caller found it: one that differs
	// later is another request's refresh (or a sign-in), which it takes.
	var seen *string
	for first := true; ; first = false {
		acc, err := s.account(ctx, userID, provider)
		if err != nil {
			return Token{}, err
		}
		if first {
			seen = acc.AccessToken
		}
		now := s.cfg.Now()
		if s.fresh(acc, now) || s.newer(acc, seen, now) {
			return s.answer(ctx, acc)
		}
		if acc.RefreshLeaseUntil == nil || *acc.RefreshLeaseUntil < now.UnixMilli() {
			won, err := s.store.TakeLease(ctx, acc.ID, s.owner, now, now.Add(s.cfg.CallTimeout+leaseMargin))
			if err != nil {
				return Token{}, err
			}
			if won {
				return s.refresh(ctx, acc.ID, provider, seen)
			}
		}
		if now.After(deadline) {
			return Token{}, ErrBusy
		}
		select {
		case <-ctx.Done():
			return Token{}, fmt.Errorf("wait for refresh: %w", ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// account reads the account, refusing a marked one or one without tokens.
func (s *Service) account(ctx context.Context, userID, provider string) (*tokenstore.Account, error) {
	acc, err := s.store.Account(ctx, userID, provider)
	if err != nil {
		return nil, wrapNotFound(err)
	}
	if acc.TokenError != nil {
		return nil, ErrRefreshFailed
	}
	if acc.AccessToken == nil {
		return nil, ErrNotStored
	}
	return acc, nil
}

// fresh: no expiry known, or one beyond the skew.
func (s *Service) fresh(acc *tokenstore.Account, now time.Time) bool {
	return acc.ExpiresAt == nil || time.Unix(*acc.ExpiresAt, 0).After(now.Add(s.cfg.Skew))
}

// newer: the access token is not seen, the one the caller first found,
// and has not expired. A caller that waited on another's refresh takes
// its token though it expires within the skew: a provider whose tokens
// live less than the skew would otherwise be asked again by every
// waiting caller, one after another.
func (s *Service) newer(acc *tokenstore.Account, seen *string, now time.Time) bool {
	if acc.AccessToken == nil || (seen != nil && *acc.AccessToken == *seen) {
		return false
	}
	return acc.ExpiresAt == nil || time.Unix(*acc.ExpiresAt, 0).After(now)
}

// answer opens the stored access token. Tokens sealed under an older
// secret are sealed again under the first (Replace: unless another writer
// came first); the three are always written together, so the access
// token's key tells.
func (s *Service) answer(ctx context.Context, acc *tokenstore.Account) (Token, error) {
	access, current, err := s.seal.open(acc.ID, colAccess, acc.AccessToken)
	if err != nil {
		s.cfg.Log.Warn("provider token unreadable", "provider", acc.Provider, "account", acc.ID, "err", err)
		return Token{}, ErrRefreshFailed
	}
	if !current {
		s.reseal(ctx, acc)
	}
	return set{access: &access, expiresAt: acc.ExpiresAt, tokenType: acc.TokenType, scope: acc.Scope}.token(), nil
}

// reseal seals acc's tokens again under the first secret; a failure is
// logged (the tokens stay readable under the older one).
func (s *Service) reseal(ctx context.Context, acc *tokenstore.Account) {
	set, _, err := s.openSet(acc)
	if err == nil {
		var next tokenstore.Sealed
		if next, err = s.sealSet(acc.ID, set); err == nil {
			_, err = s.store.Replace(ctx, acc.ID, acc.Sealed, next)
		}
	}
	if err != nil {
		s.cfg.Log.Warn("re-seal provider tokens", "account", acc.ID, "err", err)
	}
}

// refresh runs under the lease on account id: it reads that row again
// (the holder before may have just refreshed: newer than seen), spends the refresh token,
// and saves the new tokens and ends the lease in one statement. It reads
// the row by id, not as fetch chose it: with two identities at provider
// the choice may move meanwhile (one marked), and the lease covers one.
func (s *Service) refresh(ctx context.Context, id, provider string, seen *string) (Token, error) {
	acc, err := s.store.AccountByID(ctx, id)
	if err != nil { // gone (unlinked), or the database failed: the lease expires
		return Token{}, wrapNotFound(err)
	}
	switch {
	case acc.TokenError != nil:
		return Token{}, errors.Join(ErrRefreshFailed, s.endLease(acc, ""))
	case acc.AccessToken == nil:
		return Token{}, errors.Join(ErrNotStored, s.endLease(acc, ""))
	case s.fresh(acc, s.cfg.Now()) || s.newer(acc, seen, s.cfg.Now()):
		return s.answerReleasing(ctx, acc)
	}
	set, _, err := s.openSet(acc)
	if err != nil || set.refresh == nil {
		s.cfg.Log.Warn("provider token cannot be refreshed: the user must sign in again", "provider", provider, "account", acc.ID, "err", err)
		return Token{}, errors.Join(ErrRefreshFailed, s.endLease(acc, RefreshError))
	}
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	tok, err := s.refresher.Refresh(callCtx, provider, *set.refresh)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			s.cfg.Log.Info("provider refused the refresh token: the user must sign in again", "provider", provider, "account", acc.ID)
			return Token{}, errors.Join(ErrRefreshFailed, s.endLease(acc, RefreshError))
		}
		return Token{}, errors.Join(fmt.Errorf("%w: %w", ErrProviderDown, err), s.endLease(acc, ""))
	}
	next := tokenSet(tok, idTokenOf(tok), &set, s.cfg.Now())
	sealed, err := s.sealSet(acc.ID, next)
	if err != nil {
		return Token{}, errors.Join(err, s.endLease(acc, ""))
	}
	saved, err := s.saveRefreshed(ctx, acc.ID, sealed)
	if err != nil {
		return Token{}, err
	}
	if !saved {
		// The lease ran out under a provider slower than CallTimeout
		// allows, or a sign-in replaced the tokens: the token is good,
		// the row keeps what the other writer put there (a sign-in's
		// are the newer), but for the rotated refresh token.
		s.cfg.Log.Warn("refreshed provider token not saved: the lease was lost", "provider", provider, "account", acc.ID)
		s.keepRotated(ctx, acc.ID, *set.refresh, next.refresh)
	}
	return next.token(), nil
}

// keepRotated writes rotated over the row's refresh token when that is
// still spent, the one the refresh gave the provider: a sign-in that
// brought none kept it (keptRefresh), and the provider has revoked it, so
// the next refresh would be refused and the user marked. A row holding
// another refresh token (the sign-in's own), or marked, is left as it is.
// Conditional on the row (Replace), so a later writer wins; a failure is
// logged.
func (s *Service) keepRotated(ctx context.Context, id, spent string, rotated *string) {
	if rotated == nil || *rotated == spent {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	acc, err := s.store.AccountByID(ctx, id)
	if err != nil || acc.TokenError != nil || acc.RefreshToken == nil {
		return
	}
	if rt, _, err := s.seal.open(acc.ID, colRefresh, acc.RefreshToken); err != nil || rt != spent {
		return
	}
	next := acc.Sealed
	if next.RefreshToken, err = s.seal.seal(acc.ID, colRefresh, rotated); err == nil {
		_, err = s.store.Replace(ctx, acc.ID, acc.Sealed, next)
	}
	if err != nil {
		s.cfg.Log.Warn("rotated refresh token not kept", "account", acc.ID, "err", err)
	}
}

// saveTimeout bounds one write of a refresh's tokens, and of a lease's end.
const saveTimeout = 5 * time.Second

// saveRefreshed saves a refresh's tokens, retrying once when the store
// fails. The provider has spent the old refresh token: lost, the rotated
// one would make the next refresh invalid_grant and mark the user. So
// the save outlives the request's deadline (a long wait, then a slow
// provider, can use it up), under its own bound.
func (s *Service) saveRefreshed(ctx context.Context, id string, sealed tokenstore.Sealed) (bool, error) {
	var errs error
	for range 2 {
		saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
		saved, err := s.store.SaveRefreshed(saveCtx, id, s.owner, sealed)
		cancel()
		if err == nil {
			return saved, nil
		}
		errs = errors.Join(errs, err)
	}
	return false, errs
}

func (s *Service) answerReleasing(ctx context.Context, acc *tokenstore.Account) (Token, error) {
	t, err := s.answer(ctx, acc)
	return t, errors.Join(err, s.endLease(acc, ""))
}

// endLease ends this process's lease on acc (nil: no account, nothing to end).
func (s *Service) endLease(acc *tokenstore.Account, mark string) error {
	if acc == nil {
		return nil
	}
	// Even when the request's context ended: a lease left behind would
	// hold every other request until it expired.
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	if mark != "" {
		defer s.marks.forget(acc.UserID)
	}
	return s.store.EndLease(ctx, acc.ID, s.owner, mark)
}
