package catalogue

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/markbates/goth"
	"golang.org/x/oauth2"
)

// Profile is the user as the provider describes them, mapped from goth.User.
type Profile struct {
	ID, Name, Email, Image string
	// EmailVerified says the provider vouches for Email; see VerifiesEmail.
	EmailVerified bool
	Raw           map[string]any // the provider's own JSON, as goth decoded it
}

// sessionKeys names the JSON fields of a goth Session type. goth has no
// constructor for a Session from a token, but every provider's
// UnmarshalSession decodes JSON into its Session; most use the Go field names
// AccessToken, RefreshToken, ExpiresAt and IDToken, which are the defaults.
// Unknown keys are ignored by goth's decoder.
type sessionKeys struct {
	access, refresh, expiry string
	// fromToken copies token-response fields into session fields that
	// goth's FetchUser reads, keyed by session field.
	fromToken map[string]string
}

func (k sessionKeys) encode(tok *oauth2.Token) (string, error) {
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	m := map[string]any{or(k.access, "AccessToken"): tok.AccessToken}
	if tok.RefreshToken != "" {
		m[or(k.refresh, "RefreshToken")] = tok.RefreshToken
	}
	if !tok.Expiry.IsZero() {
		m[or(k.expiry, "ExpiresAt")] = tok.Expiry
	}
	if id := tokenString(tok, "id_token"); id != "" {
		m["IDToken"] = id
	}
	for field, name := range k.fromToken {
		if v := tokenString(tok, name); v != "" {
			m[field] = v
		}
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// tokenString reads a string or number field of the token response.
func tokenString(tok *oauth2.Token, name string) string {
	switch v := tok.Extra(name).(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// profileFunc returns Provider.Profile. Each call builds a fresh goth provider
// whose HTTP client is bound to ctx, so a slow IdP cannot outlive the request
// and concurrent calls share nothing mutable.
func (e entry) profileFunc(c Config, scopes []string) func(context.Context, *oauth2.Token) (Profile, error) {
	id := e.spec.ID
	return func(ctx context.Context, tok *oauth2.Token) (p Profile, err error) {
		if tok == nil || tok.AccessToken == "" {
			return Profile{}, fmt.Errorf("provider %q: profile: no access token", id)
		}
		if err := ctx.Err(); err != nil {
			return Profile{}, fmt.Errorf("provider %q: profile: %w", id, err)
		}
		data, err := e.session.encode(tok)
		if err != nil {
			return Profile{}, fmt.Errorf("provider %q: profile: %w", id, err)
		}
		gp := e.newGoth(c, slices.Clone(scopes))
		hc := withContext(ctx, c.HTTPClient)
		setHTTPClient(gp, hc)
		sess, err := gp.UnmarshalSession(data)
		if err != nil {
			return Profile{}, fmt.Errorf("provider %q: profile: session: %w", id, err)
		}
		// goth maps untrusted JSON with type assertions in places; a bad
		// answer must fail this sign-in, not the process.
		defer func() {
			if r := recover(); r != nil {
				p, err = Profile{}, fmt.Errorf("provider %q: profile: goth panicked: %s", id, redact(fmt.Sprint(r), tok))
			}
		}()
		u, err := gp.FetchUser(sess)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return Profile{}, fmt.Errorf("provider %q: profile: %w", id, ctxErr)
			}
			// Not wrapped: goth's errors can quote a URL carrying the token.
			return Profile{}, fmt.Errorf("provider %q: profile: %s", id, redact(err.Error(), tok))
		}
		if u.Email == "" && e.emailFromToken != "" {
			u.Email = tokenString(tok, e.emailFromToken)
		}
		if p, err = toProfile(id, u); err != nil {
			return Profile{}, err
		}
		p.EmailVerified = p.Email != "" && (c.TrustEmail || emailVerified(ctx, id, hc, tok, u))
		return p, nil
	}
}

// toProfile maps goth.User the way NextAuth's built-in providers map their
// profiles: the id is required, the e-mail is lower-cased. "0" counts as no
// id: goth formats numeric ids with strconv, so a reply without one becomes
// "0", and some providers (classlink) do not check the HTTP status, which
// would sign every failed request in as user "0".
func toProfile(id string, u goth.User) (Profile, error) {
	if u.UserID == "" || u.UserID == "0" {
		return Profile{}, fmt.Errorf("provider %q: profile: the provider returned no user id", id)
	}
	name := strings.TrimSpace(u.Name)
	if name == "" {
		name = strings.TrimSpace(u.FirstName + " " + u.LastName)
	}
	if name == "" {
		name = u.NickName
	}
	raw := u.RawData
	if raw == nil {
		raw = map[string]any{}
	}
	return Profile{
		ID:    u.UserID,
		Name:  name,
		Email: strings.ToLower(strings.TrimSpace(u.Email)),
		Image: u.AvatarURL,
		Raw:   raw,
	}, nil
}

// redact removes the access token, raw or URL-encoded, from an error text.
func redact(s string, tok *oauth2.Token) string {
	for _, t := range []string{tok.AccessToken, url.QueryEscape(tok.AccessToken), url.PathEscape(tok.AccessToken)} {
		if t != "" {
			s = strings.ReplaceAll(s, t, "[redacted]")
		}
	}
	return s
}
