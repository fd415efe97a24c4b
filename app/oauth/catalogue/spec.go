package catalogue

import (
	"slices"

	"github.com/markbates/goth"
)

// Type is the NextAuth provider type of every catalogue entry. The profile
// comes from the provider's API, not from a verified id_token, so none of them
// is "oidc"; OpenID Connect providers go through latchkey's generic OIDC path.
const Type = "oauth"

// Spec describes one goth provider latchkey can offer.
type Spec struct {
	ID   string // goth name, e.g. "github", "google", "microsoftonline"
	Name string // display name, e.g. "GitHub", "Google", "Microsoft"
	// PKCE is true when the provider documents support for PKCE with S256.
	// It is false when support is absent or unknown to us.
	PKCE bool
	// Extra lists the config fields this provider needs besides the client id
	// and secret; all are required. [ExtraHelp] says what each one means.
	Extra []string
}

// entry is one catalogue row: the public Spec plus how to build goth's provider.
type entry struct {
	spec Spec
	// scopes replaces goth's default scopes when the operator lists none, so the
	// profile has an e-mail as in NextAuth's built-in provider. nil keeps goth's.
	scopes []string
	// noScopes is set when goth's constructor takes no scopes (they are fixed
	// in the provider's console); configured scopes are then an error.
	noScopes bool
	// newGoth builds goth's provider from a validated Config and the scopes.
	newGoth func(c Config, scopes []string) goth.Provider
	// session says how goth's Session type names the token fields.
	session sessionKeys
	// emailFromToken names a token-response field holding the e-mail, for
	// providers where goth keeps it in an unexported session field (vk).
	emailFromToken string
}

// IDs returns the catalogue ids, sorted (for `latchkey providers`).
func IDs() []string {
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		ids = append(ids, e.spec.ID)
	}
	slices.Sort(ids)
	return ids
}

// Lookup returns the Spec for a catalogue id.
func Lookup(id string) (Spec, bool) {
	e, ok := find(id)
	if !ok {
		return Spec{}, false
	}
	s := e.spec
	s.Extra = slices.Clone(s.Extra)
	return s, true
}

func find(id string) (entry, bool) {
	for _, e := range entries {
		if e.spec.ID == id {
			return e, true
		}
	}
	return entry{}, false
}
