package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/app/finish"
	"github.com/latchkey-auth/latchkey/app/signin"
)

// Browser is the requesting browser as sign-out everywhere needs it: the
// session it holds, and how to end it.
type Browser interface {
	// SignedInUser is the user id of the browser's valid session, "" when none.
	SignedInUser(ctx context.Context) (string, error)
	// EndSession ends the browser's own session and clears its cookie.
	EndSession(ctx context.Context) error
}

// SignOutEverywhere ends every session of the browser's signed-in user, in
// both strategies the same way (as `latchkey sessions revoke --user`): the
// sessions signed in until now are revoked (session_revocations, in the
// transaction that deletes the user's database sessions), which ends the
// JWTs living in cookies and the OpenID Provider's grants of those
// sign-ins too; then this browser's cookie is cleared. It returns once
// the second of the revocation is over (SessionsEnded), so a sign-in right
// after is not ended. With removeLinked the user's linked sign-in methods
// are removed first (never the last way to sign in); that is unlinking
// them all, so the browser's session (who) must be one that may unlink
// one (Privileged), else ErrReauth (ErrStepUp) before anything is done: a
// stolen or borrowed session stripped the owner's identities, which the
// account page guards one by one. Once begun it runs
// to its end whether or not the client waits: one that left halfway
// (after the remembered browsers were forgotten, before the sessions
// ended) would have left every session alive. Every failure is
// Configuration and signs nobody out (nothing claims a sign-out that did
// not happen): the user sees it and can retry.
func (s *Service) SignOutEverywhere(ctx context.Context, b Browser, removeLinked bool, who SignedIn) error {
	if removeLinked && who.UserID != "" {
		if err := s.Privileged(ctx, who); err != nil {
			return err
		}
	}
	ctx, cancel := finish.Detached(ctx)
	defer cancel()
	// The remembered browsers and pending e-mail changes go first
	// (takeBack): a sign-out everywhere that left a browser able to skip
	// the second factor, or a stolen session's change link able to move
	// the address, would not be one.
	if uid, err := b.SignedInUser(ctx); err == nil && uid != "" {
		if err := s.takeBack(ctx, uid); err != nil {
			return signin.Failf(signin.CodeConfiguration, "sign-out everywhere: %w", err)
		}
	}
	if removeLinked {
		if err := s.unlinkOnSignOut(ctx, b); err != nil {
			return signin.Failf(signin.CodeConfiguration, "sign-out everywhere: remove linked sign-in methods: %w", err)
		}
	}
	uid, err := b.SignedInUser(ctx)
	if err != nil { // as GET /session: an unreadable session is none
		s.Log.Warn("sign-out everywhere: the session could not be read", "err", err)
	}
	if uid != "" {
		n, err := s.revokeSessions(ctx, uid)
		if err != nil {
			return signin.Failf(signin.CodeConfiguration, "sign-out everywhere: %w", err)
		}
		s.Log.Info("signed out everywhere: sessions revoked", "user", uid, "database_sessions", n)
	}
	if err := b.EndSession(ctx); err != nil {
		return signin.Failf(signin.CodeConfiguration, "sign-out everywhere: %w", err)
	}
	return nil
}

// unlinkOnSignOut removes the signed-in user's linked sign-in methods. No
// session, an unreadable one (as GET /session) or a user deleted while
// its JWT lives on has none to remove.
func (s *Service) unlinkOnSignOut(ctx context.Context, b Browser) error {
	uid, err := b.SignedInUser(ctx)
	if err != nil {
		return nil //nolint:nilerr // an unreadable session is none
	}
	u, err := s.SignedInUser(ctx, uid)
	switch {
	case errors.Is(err, ErrSignedOut):
		return nil
	case err != nil:
		return err
	}
	if err := s.removeLinked(ctx, u); err != nil {
		return fmt.Errorf("user %s: %w", u.ID, err)
	}
	return nil
}

// revokeSessions ends every session of the user signed in until now, in
// both strategies (as `latchkey sessions revoke --user`), and returns
// once the revocation's second is over; n is the database sessions ended.
func (s *Service) revokeSessions(ctx context.Context, userID string) (int64, error) {
	at := s.Now()
	n, err := s.Store.RevokeSessions(ctx, userID, at)
	if err != nil {
		return 0, fmt.Errorf("revoke sessions: %w", err)
	}
	s.sessionsEnded(ctx, at)
	return n, nil
}
