package providertokens

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gorilla/securecookie"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/models"
)

// sealPrefix starts every sealed token: its format's version, so that a
// later format can be told apart, and so that the start-up step can tell
// a token stored in the clear (by an earlier latchkey) from a sealed one.
const sealPrefix = "lk1:"

// sealPurpose names the tokens' keys (cookies.SealedCodecs): derived from
// each service secret by HKDF, shared with nothing else.
const sealPurpose = "latchkey provider tokens"

// errUnopenable: a token that no configured secret opens (sealed under a
// secret since retired, or altered).
var errUnopenable = errors.New("a stored provider token does not open under any configured secret")

// sealer seals tokens as the two-factor secrets are sealed: the
// securecookie codecs of cookies.SealedCodecs (AES-256-CTR and
// HMAC-SHA256, encrypt-then-MAC), the first secret sealing and every one
// opening, so AUTH_SECRET_1..3 rotation needs nothing more. A token is
// bound to its account and column (the codec's name is authenticated), so
// a sealed value moved to another row or column does not open.
type sealer struct {
	codecs []securecookie.Codec
}

func newSealer(secrets []string) (sealer, error) {
	codecs, err := cookies.SealedCodecs(secrets, sealPurpose, 0)
	if err != nil {
		return sealer{}, fmt.Errorf("provider tokens: %w", err)
	}
	for _, c := range codecs {
		// Tokens are no cookies: an id_token or an Entra access token
		// sealed is well over the 4 KiB cookie limit securecookie keeps.
		c.(*securecookie.SecureCookie).MaxLength(0)
	}
	return sealer{codecs: codecs}, nil
}

// name binds a sealed value to its row and column.
func name(accountID, column string) string { return column + ":" + accountID }

// seal seals plain for the column of the account; nil stays nil.
func (s sealer) seal(accountID, column string, plain *string) (*string, error) {
	if plain == nil {
		return nil, nil
	}
	v, err := s.codecs[0].Encode(name(accountID, column), *plain)
	if err != nil {
		return nil, fmt.Errorf("seal %s: %w", column, err)
	}
	v = sealPrefix + v
	return &v, nil
}

// open opens a sealed value ("" for nil); current is false when a secret
// other than the first sealed it (to be sealed again under the first).
func (s sealer) open(accountID, column string, sealed *string) (plain string, current bool, err error) {
	if sealed == nil {
		return "", true, nil
	}
	body, ok := strings.CutPrefix(*sealed, sealPrefix)
	if !ok {
		return "", false, fmt.Errorf("%s: %w (not sealed)", column, errUnopenable)
	}
	for i, c := range s.codecs {
		if c.Decode(name(accountID, column), body, &plain) == nil {
			return plain, i == 0, nil
		}
	}
	return "", false, fmt.Errorf("%s: %w", column, errUnopenable)
}

// isSealed reports whether a stored value is in a sealed format.
func isSealed(v *string) bool { return v == nil || strings.HasPrefix(*v, sealPrefix) }

// Sealer seals an account's tokens as the service does, for rows written
// without it (`latchkey import next-auth`, which brings in the tokens
// next-auth kept in the clear).
type Sealer struct{ s sealer }

// NewSealer seals under the first of secrets (the service's).
func NewSealer(secrets []string) (*Sealer, error) {
	s, err := newSealer(secrets)
	if err != nil {
		return nil, err
	}
	return &Sealer{s: s}, nil
}

// SealAccount replaces acc's access, refresh and id tokens (in the clear)
// by their sealed form, bound to acc.ID, which must be set.
func (s *Sealer) SealAccount(acc *models.Account) error {
	if acc.ID == "" {
		return errors.New("seal account tokens: the account has no id")
	}
	var err, e error
	acc.AccessToken, e = s.s.seal(acc.ID, colAccess, acc.AccessToken)
	err = errors.Join(err, e)
	acc.RefreshToken, e = s.s.seal(acc.ID, colRefresh, acc.RefreshToken)
	err = errors.Join(err, e)
	acc.IDToken, e = s.s.seal(acc.ID, colID, acc.IDToken)
	return errors.Join(err, e)
}
