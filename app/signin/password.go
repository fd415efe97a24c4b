package signin

import (
	"context"
	"errors"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/models"
)

// Passwords is the storage password sign-in needs. *models.Store
// implements it.
type Passwords interface {
	// UserAndPasswordByEmail: the user and their PHC hash ("" when they
	// have no password); no user is models.ErrNotFound.
	UserAndPasswordByEmail(ctx context.Context, email string) (*models.User, string, error)
	// PasswordHash is the user's PHC hash now; none is models.ErrNotFound.
	PasswordHash(ctx context.Context, userID string) (string, error)
	// ReplacePasswordHash stores hash only while old is still stored.
	ReplacePasswordHash(ctx context.Context, userID, old, hash string) (bool, error)
}

// CredentialsProvider is one `type: credentials` provider as the rules
// need it.
type CredentialsProvider struct {
	ID        string
	Hasher    *password.Hasher
	Passwords Passwords
	Throttle  *Throttle // nil: no throttling
}

// PasswordLogin is a POST /callback/{credentials}: the fields as posted.
type PasswordLogin struct {
	Email    string // as typed; normalised here
	Password string
	ClientIP string // from the trusted-proxies extractor
	// Device is the password device cookie as the browser sent it ("":
	// none; see Devices).
	Device string
}

// SignInWithPassword signs in with an e-mail address and a password. Every
// refusal is CredentialsSignin whatever its reason, so the answer never
// tells a wrong password from an unknown address, a user without a
// password or one whose address is not verified; the cost is the same
// too (an unknown address is checked against a dummy hash). Its cause,
// for the log, names the reason and the address masked. The one exception
// is TryLater: no hashing slot came free in time (password.ErrBusy), for
// whatever address, so the password was not judged at all.
//
// The order: read the fields (bad input is refused before any hashing),
// the user and hash (one indexed read, for any address: the throttle
// needs the user, whose sign-ins from the client make it known), the
// throttle's reservation (the attempt is counted as a failure before the
// password is checked; a blocked attempt checks nothing and counts
// nothing), Argon2id and the verified-address rule (a failure of either
// stays counted), then the SignIn hook, and the stored hash read again
// (stillThePassword: a reset that committed meanwhile wins). On success
// the session starts (or the second step is asked for), then, only then,
// the throttle counts it a success (the client known to the user), and
// the hash is transparently replaced when its parameters are not the
// current ones.
func (s *Service) SignInWithPassword(ctx context.Context, b Browser, p CredentialsProvider, in PasswordLogin) (*SignedIn, error) {
	now := s.Now()
	addr, err := email.Normalize(in.Email)
	if err != nil {
		return nil, Failf(CodeCredentialsSignin, "provider %s: %w", p.ID, err)
	}
	who := email.Mask(addr)
	if _, err := password.Normalize(in.Password); err != nil {
		return nil, Failf(CodeCredentialsSignin, "provider %s: %s: unreadable password: %w", p.ID, who, err)
	}
	user, hash, err := p.Passwords.UserAndPasswordByEmail(ctx, addr)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		// The database is down or failing over, as when the throttle's
		// counters cannot be read: try again, no password is checked.
		return nil, Failf(CodeTryLater, "provider %s: %s: looking up the user: %w", p.ID, who, err)
	}
	var held *Reservation // the attempt, counted in advance as a failure
	if p.Throttle != nil {
		uid := "" // an unknown address is never a known client
		if user != nil {
			uid = user.ID
		}
		held, err = p.Throttle.Reserve(ctx, addr, uid, in.ClientIP, in.Device, now)
		switch {
		case errors.Is(err, ErrThrottled):
			return nil, Failf(CodeCredentialsSignin, "provider %s: %s: %w", p.ID, who, err)
		case err != nil:
			// The counters could not be read or written (the database is
			// down or failing over): no password is checked (fail closed),
			// and the user is told to try again (503 in JSON mode), not
			// that the password is wrong.
			return nil, Failf(CodeTryLater, "provider %s: %s: password throttle: %w", p.ID, who, err)
		}
	}
	release := func() {
		if held != nil {
			held.Release(ctx)
		}
	}
	ok, rehash, err := p.Hasher.Verify(hash, in.Password)
	if err != nil { // busy, or a stored hash we cannot read (the operator's problem, logged)
		release()
		code := CodeCredentialsSignin
		if errors.Is(err, password.ErrBusy) {
			code = CodeTryLater
		}
		return nil, Failf(code, "provider %s: %s: checking the password: %w", p.ID, who, err)
	}
	// An unverified address counts as a failure too: every refusal after
	// the hash costs the same work, so timing tells none of them apart.
	if !ok || user.EmailVerified == nil {
		why := "wrong password"
		switch {
		case user == nil:
			why = "no such user"
		case hash == "":
			why = "the user has no password"
		case ok:
			why = "e-mail address not verified yet"
		}
		return nil, Failf(CodeCredentialsSignin, "provider %s: %s: %s", p.ID, who, why)
	}
	if err := s.checkSignIn(ctx, SignInInput{User: *user, Provider: p.ID, Type: "credentials", Email: addr, EmailVerified: true}); err != nil {
		release() // the password was right: not a failure
		return nil, err
	}
	if err := s.stillThePassword(ctx, p, user.ID, hash, in.Password, who); err != nil {
		if CodeOf(err) == CodeTryLater {
			release() // not judged
		}
		return nil, err // else counted: the password it matched is no longer the account's
	}
	out := &SignedIn{User: user, Provider: p.ID, Methods: []string{twofactor.MethodPassword}}
	if err := s.startSession(ctx, b, out); err != nil {
		// The JWT hook refused (AccessDenied) or the session could not be
		// stored: no sign-in, so the client is not made known nor the
		// pair's count cleared; the password was right, so not a failure.
		release()
		return nil, err
	}
	if held != nil {
		if err := held.Succeeded(ctx, now); err != nil {
			s.Log.Warn("password throttle not reset after a sign-in", "provider", p.ID, "err", err)
		}
		// The browser is known to the account from now on, whatever its
		// IP (also when the second factor is still to come: the password
		// was right).
		if out.PasswordDevice, out.PasswordDeviceExpires, err = held.DeviceCookie(user.ID, now); err != nil {
			s.Log.Warn("no password device cookie after a sign-in", "provider", p.ID, "err", err)
		}
	}
	if rehash {
		s.rehash(ctx, p, user.ID, hash, in.Password)
	}
	return out, nil
}

// stillThePassword refuses a sign-in whose password stopped being the
// account's while it was checked: a reset or change that committed after
// the hash was read (Argon2id, and the wait for a hashing slot, take up to
// seconds) ended every session signed in up to then, not the one this
// sign-in would start now, so an old password racing its reset would
// outlive it. checked is the hash pw matched; a different hash now is
// checked again (a parallel sign-in's re-hash keeps the password), and a
// removed one refuses. A store that cannot answer is TryLater.
func (s *Service) stillThePassword(ctx context.Context, p CredentialsProvider, userID, checked, pw, who string) error {
	current, err := p.Passwords.PasswordHash(ctx, userID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return Failf(CodeCredentialsSignin, "provider %s: %s: the password was removed while it was checked", p.ID, who)
	case err != nil:
		return Failf(CodeTryLater, "provider %s: %s: reading the password again: %w", p.ID, who, err)
	case current == checked:
		return nil
	}
	ok, _, err := p.Hasher.Verify(current, pw)
	switch {
	case errors.Is(err, password.ErrBusy):
		return Failf(CodeTryLater, "provider %s: %s: checking the changed password: %w", p.ID, who, err)
	case err != nil || !ok:
		return Failf(CodeCredentialsSignin, "provider %s: %s: the password changed while it was checked", p.ID, who)
	}
	return nil
}

// rehash replaces a hash made with other parameters (see password.Verify).
// It does not stop the sign-in: the old hash still works, and the next
// sign-in tries again.
func (s *Service) rehash(ctx context.Context, p CredentialsProvider, userID, old, pw string) {
	fresh, err := p.Hasher.Hash(pw)
	if err == nil {
		_, err = p.Passwords.ReplacePasswordHash(ctx, userID, old, fresh)
	}
	if err != nil {
		s.Log.Warn("password not re-hashed with the current parameters", "provider", p.ID, "err", err)
	}
}
