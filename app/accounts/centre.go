package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// The account page's rules (app/accountcentre): the user's sessions one by
// one, unlinking an identity, changing the e-mail address, deleting the
// account. Each refusal is one of these errors (or ErrBadAddress,
// ErrRateLimited, ErrDeadLink above), which the handler maps to its
// documented code; a refusal changes nothing.
var (
	ErrReauth          = errors.New("a recent sign-in is needed")
	ErrLastMethod      = errors.New("the last way to sign in")
	ErrNotFound        = errors.New("no such session of this user")
	ErrNoSuchMethod    = errors.New("no such sign-in method of this user")
	ErrSelfDeleteOff   = errors.New("self-deletion is off")
	ErrDeleteConfirm   = errors.New("the typed confirmation does not match")
	ErrAddressTaken    = errors.New("another user has the address")
	ErrNothingToChange = errors.New("the address is the user's already")
)

// ErrStepUp is ErrReauth for a recent session that has not used the
// second factor: the step-up form, not a new sign-in, mends it.
var ErrStepUp = fmt.Errorf("%w, with the second factor", ErrReauth)

// Centre is the storage of the account page's changes
// (models/accountstore).
type Centre interface {
	// UnlinkAccount unlinks accountID unless keep, given the ways to sign
	// in left (read under the user's row lock), refuses.
	UnlinkAccount(ctx context.Context, userID, accountID string, keep func(left models.SignInWays) error) (bool, error)
	CreateEmailChange(ctx context.Context, userID, newAddr, tokenHash string, expires time.Time) error
	DeleteEmailChange(ctx context.Context, userID, tokenHash string) error
	EmailChangeByHash(ctx context.Context, tokenHash string, now time.Time) (userID, newAddr string, err error)
	ApplyEmailChange(ctx context.Context, tokenHash string, now time.Time) (userID, oldAddr, newAddr string, err error)
	// DeleteEmailChanges ends every pending e-mail change link of the
	// user and returns how many there were.
	DeleteEmailChanges(ctx context.Context, userID string) (int64, error)
}

// SessionsBrowser is the requesting browser as the sessions list needs
// it: its user and when it signed in, and the strategy's records of the
// user's sessions (session.Browser).
type SessionsBrowser interface {
	Browser
	SignedInSince(ctx context.Context) (string, time.Time, error)
	Records(ctx context.Context, userID string) ([]session.Record, error)
	EndRecord(ctx context.Context, userID, id string) (bool, error)
	EndOtherRecords(ctx context.Context, userID string) (int64, error)
}

// ListSessions is every live session of the user, the browser's own marked.
func (s *Service) ListSessions(ctx context.Context, b SessionsBrowser, userID string) ([]session.Record, error) {
	return b.Records(ctx, userID)
}

// EndSession ends one of the user's sessions, on every instance (a JWT one
// once the revocation poll has read it: the local copy is reloaded at
// once). Another user's id, or one already ended, is ErrNotFound. Ending
// the browser's own session signs it out here too.
func (s *Service) EndSession(ctx context.Context, b SessionsBrowser, userID, id string) error {
	list, err := b.Records(ctx, userID)
	if err != nil {
		return err
	}
	current := false
	for _, r := range list {
		if r.ID == id {
			current = r.Current
		}
	}
	ok, err := b.EndRecord(ctx, userID, id)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	s.Log.Info("session ended from the account page", "user", userID, "own", current)
	s.reloadRevocations(ctx)
	if current {
		return b.EndSession(ctx)
	}
	return nil
}

// EndOtherSessions ends every session of the user but the browser's.
func (s *Service) EndOtherSessions(ctx context.Context, b SessionsBrowser, userID string) (int64, error) {
	n, err := b.EndOtherRecords(ctx, userID)
	if err != nil {
		return 0, err
	}
	s.Log.Info("other sessions ended from the account page", "user", userID, "ended", n)
	s.reloadRevocations(ctx)
	return n, nil
}

// reloadRevocations has this instance read the ended sign-ins now rather
// than at its next poll.
func (s *Service) reloadRevocations(ctx context.Context) {
	if s.RevocationsChanged != nil {
		s.RevocationsChanged(ctx)
	}
}

// Recent reports whether a session that signed in at since is recent
// enough for what the account pages guard (Privileged): within the window
// of adding a passkey.
func (s *Service) Recent(since time.Time) bool {
	return s.ReauthWindow > 0 && s.Now().Sub(since) <= s.ReauthWindow
}

// SignedIn is the request's session as the guarded changes check it: its
// user, when it signed in and how (amr values).
type SignedIn struct {
	UserID  string
	Since   time.Time
	Methods []string
}

// SecondFactor tells whether a session must prove the second factor before
// a privileged change (*twofactor.Service).
type SecondFactor interface {
	NeedsSecondFactor(ctx context.Context, userID string, methods []string) (bool, error)
	// MustEnrol reports whether the policy requires two-factor of the
	// user at addr and none is in force (an address change into it).
	MustEnrol(ctx context.Context, userID string, addr *string) (bool, error)
}

// Privileged is ErrReauth unless who may make a change that could hand
// the account over — remove a passkey, link or unlink an identity, start
// an e-mail change, delete the account: a recent sign-in (Recent) and,
// once two-factor is in force for the user, one that used it (amr mfa;
// ErrStepUp otherwise), as adding a passkey or making recovery codes
// needs. GitHub asks for sudo mode and Supabase for AAL2 the same way:
// a session an intruder kept from before two-factor was turned on must
// not strip the owner's factors, nor move the address to one it reads and
// reset the password there. A failure to read two-factor is the
// server's, not a refusal.
func (s *Service) Privileged(ctx context.Context, who SignedIn) error {
	if !s.Recent(who.Since) {
		return ErrReauth
	}
	if s.SecondFactor == nil {
		return nil
	}
	need, err := s.SecondFactor.NeedsSecondFactor(ctx, who.UserID, who.Methods)
	switch {
	case err != nil:
		return fmt.Errorf("ask whether two-factor is in force: %w", err)
	case need:
		s.Log.Info("the change needs a session that used the second factor", "user", who.UserID)
		return ErrStepUp
	}
	return nil
}
