package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/passkey"
	"github.com/latchkey-auth/latchkey/app/web"
)

// challengePurpose names the challenge cookie's keys (cookies.SealedCodecs).
const challengePurpose = "latchkey webauthn challenge"

// passkeys is the configured webauthn providers and the cookie that holds a
// ceremony's state between its options and its answer: Auth.js v5's
// {prefix}.challenge (__Secure- under https), sealed with the secret,
// on the base path, for passkey.Timeout. The state alone is not enough to
// answer twice: the sign-in rules record each answered challenge.
type passkeys struct {
	rps    map[string]*passkey.RP
	cfg    map[string]config.Provider
	name   string
	writer cookies.Writer
	codecs []securecookie.Codec
}

// ceremonyState is the challenge cookie's content.
type ceremonyState struct {
	Action   string          `json:"a"` // register or authenticate
	Provider string          `json:"p"`
	Created  int64           `json:"t"` // Unix seconds, by the app's clock
	State    json.RawMessage `json:"s"` // passkey.State
}

func (a *App) buildPasskeys() (*passkeys, error) {
	ps := &passkeys{rps: map[string]*passkey.RP{}, cfg: map[string]config.Provider{}, writer: a.cookies}
	for _, p := range a.cfg.Providers {
		if p.Type != config.TypeWebAuthn {
			continue
		}
		rp, err := passkey.New(passkey.Settings{
			RPID:                   a.cfg.PasskeyRPID(p),
			Name:                   web.HostOf(a.base.Origin),
			Origins:                append([]string{a.base.Origin}, p.Origins...),
			UserVerification:       p.UserVerification,
			SignInUserVerification: p.SignInUserVerification,
			Attestation:            p.Attestation,
		})
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", p.ID, err)
		}
		ps.rps[p.ID], ps.cfg[p.ID] = rp, p
	}
	sec := ""
	if a.base.Secure {
		sec = "__Secure-"
	}
	ps.name = sec + a.dialect.cookiePrefix + ".challenge"
	ps.writer.Path = a.base.Path
	codecs, err := cookies.SealedCodecs(a.cfg.Secrets(), challengePurpose, passkey.Timeout)
	if err != nil {
		return nil, err
	}
	ps.codecs = codecs
	return ps, nil
}

// setState seals a ceremony's state into the challenge cookie.
func (ps *passkeys) setState(w http.ResponseWriter, action, provider string, st *passkey.State, now time.Time) error {
	raw, err := passkey.MarshalState(st)
	if err != nil {
		return err
	}
	v, err := ps.codecs[0].Encode(ps.name, ceremonyState{Action: action, Provider: provider, Created: now.Unix(), State: raw})
	if err != nil {
		return fmt.Errorf("seal %s cookie: %w", ps.name, err)
	}
	ps.writer.Set(w, ps.name, v, now.Add(passkey.Timeout), passkey.Timeout)
	return nil
}

// takeState reads and clears the challenge cookie; it must be for this
// action and provider, and younger than passkey.Timeout by the app's clock
// (securecookie and the library check the system clock too).
func (ps *passkeys) takeState(w http.ResponseWriter, r *http.Request, action, provider string, now time.Time) (*passkey.State, error) {
	raw, ok := cookies.Read(r, ps.name)
	if !ok || raw == "" {
		return nil, fmt.Errorf("%s cookie was missing", ps.name)
	}
	ps.writer.Clear(w, ps.name)
	var cs ceremonyState
	if err := securecookie.DecodeMulti(ps.name, raw, &cs, ps.codecs...); err != nil {
		return nil, fmt.Errorf("%s cookie: %w", ps.name, err)
	}
	if age := now.Sub(time.Unix(cs.Created, 0)); age > passkey.Timeout || age < -time.Minute {
		return nil, fmt.Errorf("%s cookie expired (%s old)", ps.name, age.Round(time.Second))
	}
	if cs.Action != action || cs.Provider != provider {
		return nil, fmt.Errorf("%s cookie is for %s with %s, not %s with %s", ps.name, cs.Action, cs.Provider, action, provider)
	}
	return passkey.UnmarshalState(cs.State)
}
