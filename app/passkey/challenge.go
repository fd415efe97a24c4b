package passkey

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
)

// challengePurpose names the challenge cookie's keys (cookies.SealedCodecs).
const challengePurpose = "latchkey webauthn challenge"

// Parties is the configured webauthn providers' relying parties and the
// cookie that holds a ceremony's state between its options and its
// answer: Auth.js v5's {prefix}.challenge (__Secure- under https), sealed
// with the secret, on the base path, for Timeout. The state alone is not
// enough to answer twice: the sign-in rules record each answered
// challenge. The passkey ceremony (app/passkeyflow) and the passkeys page
// (app/accountpages) share it.
type Parties struct {
	rps    map[string]*RP
	first  string // the first webauthn provider's id, in the config's order
	name   string
	writer cookies.Writer
	codecs []securecookie.Codec
}

// ceremonyState is the challenge cookie's content.
type ceremonyState struct {
	Action   string          `json:"a"` // register or authenticate
	Provider string          `json:"p"`
	Created  int64           `json:"t"` // Unix seconds, by the app's clock
	State    json.RawMessage `json:"s"` // State
}

// PartiesConfig is what NewParties builds the parties from.
type PartiesConfig struct {
	Providers []config.Provider // every provider: the webauthn ones are used
	// RPID is a provider's relying-party id (config.Config.PasskeyRPID).
	RPID   func(config.Provider) string
	Name   string // the service's host, shown by some authenticators
	Origin string // the service's origin; a provider may add more
	// Cookie is the challenge cookie's name; Writer writes it (its Path
	// the base path).
	Cookie  string
	Writer  cookies.Writer
	Secrets []string // the current one first
}

// NewParties builds the relying party of every webauthn provider.
func NewParties(pc PartiesConfig) (*Parties, error) {
	ps := &Parties{rps: map[string]*RP{}, name: pc.Cookie, writer: pc.Writer}
	for _, p := range pc.Providers {
		if p.Type != config.TypeWebAuthn {
			continue
		}
		rp, err := New(Settings{
			RPID:                   pc.RPID(p),
			Name:                   pc.Name,
			Origins:                append([]string{pc.Origin}, p.Origins...),
			UserVerification:       p.UserVerification,
			SignInUserVerification: p.SignInUserVerification,
			Attestation:            p.Attestation,
		})
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", p.ID, err)
		}
		if len(ps.rps) == 0 {
			ps.first = p.ID
		}
		ps.rps[p.ID] = rp
	}
	codecs, err := cookies.SealedCodecs(pc.Secrets, challengePurpose, Timeout)
	if err != nil {
		return nil, err
	}
	ps.codecs = codecs
	return ps, nil
}

// Offered reports whether a webauthn provider is configured.
func (ps *Parties) Offered() bool { return len(ps.rps) > 0 }

// First is the first webauthn provider's id (the passkeys page's), "" for none.
func (ps *Parties) First() string { return ps.first }

// RP is provider id's relying party.
func (ps *Parties) RP(id string) (*RP, bool) {
	rp, ok := ps.rps[id]
	return rp, ok
}

// CookieName is the challenge cookie's name.
func (ps *Parties) CookieName() string { return ps.name }

// SetState seals a ceremony's state into the challenge cookie.
func (ps *Parties) SetState(w http.ResponseWriter, action, provider string, st *State, now time.Time) error {
	raw, err := MarshalState(st)
	if err != nil {
		return err
	}
	v, err := ps.codecs[0].Encode(ps.name, ceremonyState{Action: action, Provider: provider, Created: now.Unix(), State: raw})
	if err != nil {
		return fmt.Errorf("seal %s cookie: %w", ps.name, err)
	}
	ps.writer.Set(w, ps.name, v, now.Add(Timeout), Timeout)
	return nil
}

// TakeState reads and clears the challenge cookie; it must be for this
// action and provider, and younger than Timeout by the app's clock
// (securecookie and the library check the system clock too).
func (ps *Parties) TakeState(w http.ResponseWriter, r *http.Request, action, provider string, now time.Time) (*State, error) {
	raw, ok := cookies.Read(r, ps.name)
	if !ok || raw == "" {
		return nil, fmt.Errorf("%s cookie was missing", ps.name)
	}
	ps.writer.Clear(w, ps.name)
	var cs ceremonyState
	if err := securecookie.DecodeMulti(ps.name, raw, &cs, ps.codecs...); err != nil {
		return nil, fmt.Errorf("%s cookie: %w", ps.name, err)
	}
	if age := now.Sub(time.Unix(cs.Created, 0)); age > Timeout || age < -time.Minute {
		return nil, fmt.Errorf("%s cookie expired (%s old)", ps.name, age.Round(time.Second))
	}
	if cs.Action != action || cs.Provider != provider {
		return nil, fmt.Errorf("%s cookie is for %s with %s, not %s with %s", ps.name, cs.Action, cs.Provider, action, provider)
	}
	return UnmarshalState(cs.State)
}
