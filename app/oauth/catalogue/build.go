package catalogue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Config is what an operator writes in config.yaml for one provider.
type Config struct {
	ID, ClientID, ClientSecret, CallbackURL string
	// Scopes replaces the provider's default scopes when not empty.
	Scopes []string
	// Extra holds the fields named in Spec.Extra, e.g. {"tenant": "..."}.
	Extra map[string]string
	// TrustEmail marks every e-mail of this provider verified (config
	// trust_email), whatever VerifiesEmail says.
	TrustEmail bool
	// HTTPClient is used for profile requests and should be used for the code
	// exchange too (see Provider.HTTPClient). Not from config.yaml; nil means a
	// client with a 10-second timeout.
	HTTPClient *http.Client
}

// Provider is a built goth provider plus the pieces latchkey needs to run the flow itself.
type Provider struct {
	Spec   Spec
	OAuth2 *oauth2.Config // endpoints, client credentials, redirect URL, scopes (golang.org/x/oauth2)
	// AuthParams are the extra query parameters goth adds to this provider's
	// authorization request (google: access_type=offline; discord: prompt=none).
	// AuthCodeURL adds them; state, PKCE and nonce are the caller's.
	AuthParams url.Values
	// HTTPClient is the client Profile uses. For the code exchange, pass it as
	// context.WithValue(ctx, oauth2.HTTPClient, p.HTTPClient).
	HTTPClient *http.Client
	// Profile exchanges nothing: given the token set from the code exchange, it fetches and maps the user.
	// The token must be the one latchkey's own exchange returned: an id_token
	// in it is read without a signature check (see microsoftEDOV).
	Profile func(ctx context.Context, tok *oauth2.Token) (Profile, error)
}

// AuthCodeURL returns the authorization URL for state, with AuthParams and
// then opts (e.g. oauth2.S256ChallengeOption, or a nonce) applied in that order.
func (p *Provider) AuthCodeURL(state string, opts ...oauth2.AuthCodeOption) string {
	all := make([]oauth2.AuthCodeOption, 0, len(p.AuthParams)+len(opts))
	for _, k := range slices.Sorted(maps.Keys(p.AuthParams)) {
		all = append(all, oauth2.SetAuthURLParam(k, p.AuthParams.Get(k)))
	}
	return p.OAuth2.AuthCodeURL(state, append(all, opts...)...)
}

const defaultTimeout = 10 * time.Second

// Build checks cfg and builds its provider. It reports every problem in cfg at
// once (errors.Join), so `check-config` can list them together.
func Build(cfg Config) (*Provider, error) {
	e, ok := find(cfg.ID)
	if !ok {
		if why, ok := excluded[cfg.ID]; ok {
			return nil, fmt.Errorf("provider %q: not offered by latchkey: %s", cfg.ID, why)
		}
		return nil, fmt.Errorf("provider %q: unknown; known ids: %s", cfg.ID, strings.Join(IDs(), ", "))
	}
	c, err := check(e, cfg)
	if err != nil {
		return nil, err
	}
	scopes := c.Scopes
	if len(scopes) == 0 {
		scopes = e.scopes
	}
	gp := e.newGoth(c, slices.Clone(scopes))
	oc, err := oauth2ConfigOf(gp)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", c.ID, err)
	}
	oc.ClientID, oc.ClientSecret, oc.RedirectURL = c.ClientID, c.ClientSecret, c.CallbackURL
	params, err := authParams(gp, oc)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", c.ID, err)
	}
	if !setHTTPClient(gp, c.HTTPClient) {
		return nil, fmt.Errorf("provider %q: goth provider %T has no HTTPClient field", c.ID, gp)
	}
	spec := e.spec
	spec.Extra = slices.Clone(spec.Extra)
	return &Provider{
		Spec:       spec,
		OAuth2:     oc,
		AuthParams: params,
		HTTPClient: c.HTTPClient,
		Profile:    e.profileFunc(c, scopes),
	}, nil
}

// check validates cfg against e and returns a cleaned copy that shares no
// maps or slices with cfg.
func check(e entry, cfg Config) (Config, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("provider %q: "+format, append([]any{cfg.ID}, args...)...))
	}
	c := cfg
	c.ClientID, c.ClientSecret = strings.TrimSpace(cfg.ClientID), strings.TrimSpace(cfg.ClientSecret)
	if c.ClientID == "" {
		bad("missing client id")
	}
	if c.ClientSecret == "" {
		bad("missing client secret")
	}
	if u, err := url.Parse(cfg.CallbackURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		bad("callback URL %q is not an absolute http(s) URL", cfg.CallbackURL)
	}
	c.Scopes = nil
	for _, s := range cfg.Scopes {
		if s = strings.TrimSpace(s); s != "" {
			c.Scopes = append(c.Scopes, s)
		}
	}
	if e.noScopes && len(c.Scopes) > 0 {
		bad("takes no scopes; set them in the provider's developer console")
	}
	c.Extra = make(map[string]string, len(e.spec.Extra))
	for _, f := range e.spec.Extra {
		v, ok := cfg.Extra[f]
		if !ok || strings.TrimSpace(v) == "" {
			bad("missing extra field %q: %s", f, ExtraHelp(f))
			continue
		}
		v, err := cleanExtra(f, v)
		if err != nil {
			bad("extra field %q: %v", f, err)
			continue
		}
		c.Extra[f] = v
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Extra)) {
		if !slices.Contains(e.spec.Extra, k) {
			want := "none"
			if len(e.spec.Extra) > 0 {
				want = strings.Join(e.spec.Extra, ", ")
			}
			bad("unknown extra field %q (this provider takes: %s)", k, want)
		}
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: defaultTimeout}
	}
	return c, errors.Join(errs...)
}
