package signin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/twofactor"
	"github.com/latchkey-auth/latchkey/models"
)

// Passkeys is the storage of passkeys and of the WebAuthn challenges
// already answered. *models.Store implements it.
type Passkeys interface {
	AuthenticatorByCredentialID(ctx context.Context, credentialID string) (*models.Authenticator, error)
	AuthenticatorsOf(ctx context.Context, userID string) ([]models.Authenticator, error)
	AddAuthenticator(ctx context.Context, a *models.Authenticator) error
	UseAuthenticator(ctx context.Context, id string, count uint32, backupState bool, at time.Time) error
	RemoveAuthenticator(ctx context.Context, userID, id string, keep func(left models.SignInWays) error) error
	UseChallenge(ctx context.Context, hash string, expires time.Time) error
}

// Ceremony is one WebAuthn answer to verify: the relying party, the state
// its options left (from the challenge cookie) and the browser's answer
// (a PublicKeyCredential as JSON).
type Ceremony struct {
	Provider string
	RP       *passkey.RP
	State    *passkey.State
	Answer   []byte
	// RefuseRegressed refuses a sign-in whose signature counter did not
	// move forward (counter_regression: refuse); otherwise it is logged.
	RefuseRegressed bool
}

// errPasskeyGone is a passkey removed (or used by a racing sign-in that
// moved its counter past this one) between verification and use.
var errPasskeyGone = errors.New("the passkey was removed or its counter moved meanwhile")

// Passkey signs in with a passkey (a discoverable credential: the
// authenticator names the user). Every refusal — a failed verification
// (origin, RP id, challenge, signature), an unknown or removed passkey, a
// replayed challenge, a counter that went backwards — is
// WebAuthnVerificationError and changes nothing. A SignIn hook's refusal
// (AccessDenied) comes after the verified answer's challenge is spent.
func (s *Service) Passkey(ctx context.Context, b Browser, c Ceremony) (*SignedIn, error) {
	var owner *models.User
	login, err := c.RP.FinishLogin(c.State, c.Answer, func(credentialID string) (*models.Authenticator, *models.User, error) {
		a, err := s.Passkeys.AuthenticatorByCredentialID(ctx, credentialID)
		if err != nil {
			return nil, nil, fmt.Errorf("look up the passkey: %w", err)
		}
		if owner, err = s.Users.UserByID(ctx, a.UserID); err != nil {
			return nil, nil, fmt.Errorf("look up the passkey's user: %w", err)
		}
		return a, owner, nil
	})
	if err != nil {
		return nil, Fail(CodeWebAuthnVerification, err)
	}
	count := login.Count
	if login.CounterRegressed {
		if c.RefuseRegressed {
			return nil, Failf(CodeWebAuthnVerification, "passkey %s: signature counter %d did not move forward from %d: the key may be cloned", login.Authenticator.ID, login.Count, login.Authenticator.SignCount)
		}
		s.Log.Warn("passkey signature counter did not move forward: the key may be cloned", "passkey", login.Authenticator.ID, "user", owner.ID)
		count = login.Authenticator.SignCount
	}
	// The challenge is spent before the SignIn hook decides: a verified
	// answer is never good twice, so one the hook refused cannot sign in
	// later (once the hook allows it, or for whoever captured the answer
	// and its cookie; a synced passkey's counter stays 0).
	if err := s.useChallenge(ctx, c.State); err != nil {
		return nil, err
	}
	if err := s.checkSignIn(ctx, SignInInput{User: *owner, Provider: c.Provider, Type: "webauthn"}); err != nil {
		return nil, err
	}
	if err := s.Passkeys.UseAuthenticator(ctx, login.Authenticator.ID, count, login.BackupState, s.Now().UTC()); err != nil {
		if errors.Is(err, models.ErrNotFound) {
			return nil, Fail(CodeWebAuthnVerification, errPasskeyGone)
		}
		return nil, Failf(CodeCallback, "record the passkey's use: %w", err)
	}
	in := &SignedIn{User: owner, Provider: c.Provider, Methods: []string{twofactor.MethodPasskey}}
	if login.UserVerified { // a PIN or biometric unlocked the key: two factors
		in.Methods = append(in.Methods, twofactor.MethodMFA)
	}
	if err := s.startSession(ctx, b, in); err != nil {
		return nil, err
	}
	return in, nil
}

// AddPasskey registers a passkey for the browser's signed-in user, who must
// be the user the ceremony began for.
func (s *Service) AddPasskey(ctx context.Context, b Browser, c Ceremony, name string) (*models.Authenticator, error) {
	uid, err := b.SignedInUser(ctx)
	if err != nil {
		return nil, Failf(CodeCallback, "read the session: %w", err)
	}
	if uid == "" || uid != string(c.State.UserID) {
		return nil, Fail(CodeSessionRequired, errors.New("passkey registration without the session it began in"))
	}
	u, err := s.Users.UserByID(ctx, uid)
	if err != nil {
		return nil, Failf(CodeSessionRequired, "look up the signed-in user: %w", err)
	}
	a, err := c.RP.FinishRegistration(c.State, u, c.Answer)
	if err != nil {
		return nil, Fail(CodeWebAuthnVerification, err)
	}
	if err := s.useChallenge(ctx, c.State); err != nil {
		return nil, err
	}
	a.Name = PasskeyName(name, s.Now())
	a.CreatedAt = s.Now().UTC()
	if err := s.Passkeys.AddAuthenticator(ctx, a); err != nil {
		if errors.Is(err, models.ErrCredentialExists) {
			return nil, Fail(CodeWebAuthnVerification, err)
		}
		return nil, Failf(CodeCallback, "store the passkey: %w", err)
	}
	return a, nil
}

// ErrLastMethod refuses removing a user's last way to sign in.
var ErrLastMethod = errors.New("this is the last way to sign in to the account")

// RemovePasskey removes one of a user's passkeys, unless the user would be
// left with no way to sign in (WaysOffered.CanSignIn), decided in the
// removal's transaction on the ways left.
func (s *Service) RemovePasskey(ctx context.Context, userID, id string, offered WaysOffered) error {
	return s.Passkeys.RemoveAuthenticator(ctx, userID, id, func(left models.SignInWays) error {
		if !offered.CanSignIn(left) {
			return ErrLastMethod
		}
		return nil
	})
}

// maxPasskeyName bounds a passkey's name (in runes).
const maxPasskeyName = 64

// PasskeyName is the name a passkey is stored under: the user's, trimmed
// and cut to 64 characters, or "Passkey" and the date. Bytes that are not
// UTF-8 become U+FFFD and control characters other than white space
// (NUL, ESC, DEL, ...) are dropped: the name is shown on pages and
// stored as text, which PostgreSQL refuses with a NUL or bad bytes in it
// (a 500), and SQLite would keep as typed.
func PasskeyName(name string, now time.Time) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, "\uFFFD"))
	name = strings.Join(strings.Fields(name), " ")
	if r := []rune(name); len(r) > maxPasskeyName {
		name = string(r[:maxPasskeyName])
	}
	if name == "" {
		name = "Passkey " + now.UTC().Format("2006-01-02")
	}
	return name
}

// useChallenge makes a challenge single-use across instances. Its record
// is kept passkey.Timeout past the challenge's own expiry: the expiry is
// by the clock of the instance that made the options, the purge by the
// clock of whichever instance runs it, and the cookie is checked by the
// answering one's. Without the margin, an instance whose clock runs ahead
// would purge the record while the cookie still opens elsewhere, and an
// answer replayed then (a synced passkey's counter stays 0) would sign in.
func (s *Service) useChallenge(ctx context.Context, st *passkey.State) error {
	expires := st.Expires
	if expires.IsZero() {
		expires = s.Now().Add(passkey.Timeout)
	}
	err := s.Passkeys.UseChallenge(ctx, passkey.ChallengeHash(st), expires.Add(passkey.Timeout))
	if errors.Is(err, models.ErrChallengeUsed) {
		return Fail(CodeWebAuthnVerification, err)
	}
	if err != nil {
		return Failf(CodeCallback, "record the challenge: %w", err)
	}
	return nil
}
