// Package passkey runs the WebAuthn ceremonies of latchkey's passkeys with
// github.com/go-webauthn/webauthn: it makes the options a browser passes to
// navigator.credentials, and verifies what the authenticator answers
// (origin, relying-party id, challenge, signature, flags). It stores
// nothing: the challenge state travels in a sealed cookie (Parties), the
// credentials in models.Authenticator, single use is the sign-in rules'.
package passkey

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/latchkey-auth/latchkey/models"
)

// Timeout is how long a ceremony may take, from options to answer.
const Timeout = 5 * time.Minute

// ReauthWindow is how soon after signing in a user may add a passkey (and
// link an identity: signin.Service.ReauthWindow). A passkey outlives every
// session and a password reset, so a borrowed or stolen session, or one
// left open on a shared computer, must not be enough to add one: the user
// signs in again first. views/locales say "10 minutes": change both.
const ReauthWindow = 10 * time.Minute

// Settings are the relying party's.
type Settings struct {
	RPID             string
	Name             string   // shown by some authenticators
	Origins          []string // where the ceremonies may run
	UserVerification string   // registration: preferred (default), required or discouraged
	// SignInUserVerification is the sign-in's: required (default) refuses
	// an answer without the UV flag; preferred or discouraged take one.
	SignInUserVerification string
	Attestation            string // none, indirect, direct or enterprise
}

// RP is one relying party: a configured webauthn provider.
type RP struct {
	w       *webauthn.WebAuthn
	uv      protocol.UserVerificationRequirement // registration
	loginUV protocol.UserVerificationRequirement // sign-in
}

// New checks the settings and builds the relying party.
func New(s Settings) (*RP, error) {
	uv := protocol.UserVerificationRequirement(s.UserVerification)
	if uv == "" {
		uv = protocol.VerificationPreferred
	}
	// A passkey is the whole sign-in: without user verification, whoever
	// holds the security key (found, borrowed, taken from a desk) is the
	// account. Registration may take a key without a PIN (the user is
	// signed in already); signing in with it then asks for one.
	loginUV := protocol.UserVerificationRequirement(s.SignInUserVerification)
	if loginUV == "" {
		loginUV = protocol.VerificationRequired
	}
	att := protocol.ConveyancePreference(s.Attestation)
	if att == "" {
		att = protocol.PreferNoAttestation
	}
	timeouts := webauthn.TimeoutConfig{Enforce: true, Timeout: Timeout, TimeoutUVD: Timeout}
	w, err := webauthn.New(&webauthn.Config{
		RPID:                  s.RPID,
		RPDisplayName:         s.Name,
		RPOrigins:             s.Origins,
		AttestationPreference: att,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementRequired,
			UserVerification: uv,
		},
		Timeouts: webauthn.TimeoutsConfig{Login: timeouts, Registration: timeouts},
	})
	if err != nil {
		return nil, fmt.Errorf("passkey relying party: %w", err)
	}
	return &RP{w: w, uv: uv, loginUV: loginUV}, nil
}

// State is what the server keeps of a ceremony between its options and its
// answer (sealed in a cookie): the library's session data.
type State = webauthn.SessionData

// ErrVerify is every refusal of an answer: the cause is wrapped for the log.
var ErrVerify = errors.New("passkey verification failed")

// ChallengeHash names a challenge in the store of used ones.
func ChallengeHash(st *State) string {
	sum := sha256.Sum256([]byte(st.Challenge))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// BeginLogin makes the options of a discoverable sign-in: no user is
// named, the authenticator offers the passkeys it holds for the RP.
func (rp *RP) BeginLogin() (options any, st *State, err error) {
	a, st, err := rp.w.BeginDiscoverableLogin(webauthn.WithUserVerification(rp.loginUV))
	if err != nil {
		return nil, nil, fmt.Errorf("passkey sign-in options: %w", err)
	}
	return a.Response, st, nil
}

// Login is a verified sign-in answer.
type Login struct {
	Authenticator *models.Authenticator // as stored before this sign-in
	Count         uint32                // the signature counter it reported
	BackupState   bool
	// UserVerified: the authenticator verified the user (a PIN or a
	// biometric), so the passkey was two factors at once.
	UserVerified bool
	// CounterRegressed: the counter did not move forward although one of
	// the two is non-zero: the key may have been cloned.
	CounterRegressed bool
}

// Lookup finds the stored passkey of a credential id (base64url) and its
// user; models.ErrNotFound when there is none.
type Lookup func(credentialID string) (*models.Authenticator, *models.User, error)

// FinishLogin verifies a sign-in answer (the browser's
// PublicKeyCredential as JSON) against its state.
func (rp *RP) FinishLogin(st *State, answer []byte, lookup Lookup) (*Login, error) {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(answer)
	if err != nil {
		return nil, fmt.Errorf("%w: parse the answer: %w", ErrVerify, err)
	}
	var found *models.Authenticator
	handler := func(rawID, userHandle []byte) (webauthn.User, error) {
		a, u, err := lookup(base64.RawURLEncoding.EncodeToString(rawID))
		if err != nil {
			return nil, err
		}
		if string(userHandle) != u.ID {
			return nil, fmt.Errorf("the credential belongs to another user than its user handle names")
		}
		found = a
		return user{u: u, creds: []models.Authenticator{*a}}, nil
	}
	_, cred, err := rp.w.ValidatePasskeyLogin(handler, *st, parsed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerify, describe(err))
	}
	// The library checks the UV flag when the state asked for it; this
	// holds for a state sealed under an older, laxer setting too.
	if rp.loginUV == protocol.VerificationRequired && !parsed.Response.AuthenticatorData.Flags.UserVerified() {
		return nil, fmt.Errorf("%w: User verification required but flag not set by authenticator", ErrVerify)
	}
	return &Login{
		Authenticator:    found,
		Count:            parsed.Response.AuthenticatorData.Counter,
		BackupState:      parsed.Response.AuthenticatorData.Flags.HasBackupState(),
		UserVerified:     parsed.Response.AuthenticatorData.Flags.UserVerified(),
		CounterRegressed: cred.Authenticator.CloneWarning,
	}, nil
}

// BeginRegistration makes the options for adding a passkey to u; the
// passkeys u has are excluded, so an authenticator holding one says so.
func (rp *RP) BeginRegistration(u *models.User, have []models.Authenticator) (options any, st *State, err error) {
	wu := user{u: u, creds: have}
	c, st, err := rp.w.BeginRegistration(wu,
		webauthn.WithExclusions(webauthn.Credentials(wu.WebAuthnCredentials()).CredentialDescriptors()),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired))
	if err != nil {
		return nil, nil, fmt.Errorf("passkey registration options: %w", err)
	}
	return c.Response, st, nil
}

// FinishRegistration verifies a registration answer for u and returns the
// passkey to store (without id, name or times).
func (rp *RP) FinishRegistration(st *State, u *models.User, answer []byte) (*models.Authenticator, error) {
	parsed, err := protocol.ParseCredentialCreationResponseBytes(answer)
	if err != nil {
		return nil, fmt.Errorf("%w: parse the answer: %w", ErrVerify, err)
	}
	cred, err := rp.w.CreateCredential(user{u: u}, *st, parsed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerify, describe(err))
	}
	transports := make([]string, 0, len(cred.Transport))
	for _, t := range cred.Transport {
		// What the browser says, unverified (hints given back in later
		// options): only WebAuthn's values, once each. A NUL there failed
		// the store on PostgreSQL; junk and commas were kept.
		if knownTransport(t) && !slices.Contains(transports, string(t)) {
			transports = append(transports, string(t))
		}
	}
	return &models.Authenticator{
		UserID:         u.ID,
		CredentialID:   base64.RawURLEncoding.EncodeToString(cred.ID),
		PublicKey:      cred.PublicKey,
		SignCount:      cred.Authenticator.SignCount,
		Transports:     strings.Join(transports, ","),
		BackupEligible: cred.Flags.BackupEligible,
		BackupState:    cred.Flags.BackupState,
		AAGUID:         cred.Authenticator.AAGUID,
	}, nil
}

// knownTransport reports whether t is one of WebAuthn's
// AuthenticatorTransport values (the library maps the old "cable" to
// hybrid).
func knownTransport(t protocol.AuthenticatorTransport) bool {
	switch t {
	case protocol.USB, protocol.NFC, protocol.BLE, protocol.SmartCard, protocol.Hybrid, protocol.Internal:
		return true
	}
	return false
}

// describe adds the library's developer detail (which check failed) to
// its error, for the log.
func describe(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.DevInfo != "" {
		return fmt.Errorf("%w (%s)", err, pe.DevInfo)
	}
	return err
}

// user is a latchkey user as the library sees it: the user handle is the
// user id (a random UUID, so it tells nothing about the person).
type user struct {
	u     *models.User
	creds []models.Authenticator
}

func (w user) WebAuthnID() []byte { return []byte(w.u.ID) }

func (w user) WebAuthnName() string {
	if w.u.Email != nil && *w.u.Email != "" {
		return *w.u.Email
	}
	return w.u.ID
}

func (w user) WebAuthnDisplayName() string {
	if w.u.Name != nil && *w.u.Name != "" {
		return *w.u.Name
	}
	return w.WebAuthnName()
}

func (w user) WebAuthnCredentials() []webauthn.Credential {
	out := make([]webauthn.Credential, 0, len(w.creds))
	for _, a := range w.creds {
		id, err := base64.RawURLEncoding.DecodeString(a.CredentialID)
		if err != nil {
			continue
		}
		var transports []protocol.AuthenticatorTransport
		for t := range strings.SplitSeq(a.Transports, ",") {
			if t != "" {
				transports = append(transports, protocol.AuthenticatorTransport(t))
			}
		}
		out = append(out, webauthn.Credential{
			ID:        id,
			PublicKey: a.PublicKey,
			Transport: transports,
			Flags: webauthn.CredentialFlags{
				UserPresent:    true,
				BackupEligible: a.BackupEligible,
				BackupState:    a.BackupState,
			},
			Authenticator: webauthn.Authenticator{AAGUID: a.AAGUID, SignCount: a.SignCount},
		})
	}
	return out
}

// MarshalState and UnmarshalState carry a State through the cookie.
func MarshalState(st *State) ([]byte, error) { return json.Marshal(st) }

// UnmarshalState is MarshalState's inverse.
func UnmarshalState(b []byte) (*State, error) {
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("passkey state: %w", err)
	}
	return &st, nil
}
