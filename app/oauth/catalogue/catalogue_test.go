package catalogue

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// fakeConfig is a valid config for id: fake credentials plus an example value
// for each extra field.
func fakeConfig(id string) Config {
	s, _ := Lookup(id)
	extra := map[string]string{}
	for _, f := range s.Extra {
		extra[f] = extraFields[f].example
	}
	return Config{
		ID:           id,
		ClientID:     "client-" + id,
		ClientSecret: "secret-" + id,
		CallbackURL:  "https://auth.example.test/api/auth/callback/" + id,
		Extra:        extra,
	}
}

func TestCatalogueShape(t *testing.T) {
	ids := IDs()
	if len(ids) < 40 {
		t.Fatalf("only %d providers", len(ids))
	}
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Fatalf("IDs not sorted and unique: %v", ids)
	}
	names := map[string]string{}
	for _, id := range ids {
		s, ok := Lookup(id)
		if !ok || s.ID != id {
			t.Fatalf("Lookup(%q) = %+v, %v", id, s, ok)
		}
		if strings.TrimSpace(s.Name) == "" {
			t.Errorf("%s: empty display name", id)
		}
		if other, dup := names[strings.ToLower(s.Name)]; dup {
			t.Errorf("%s and %s share the display name %q", id, other, s.Name)
		}
		names[strings.ToLower(s.Name)] = id
		for _, f := range s.Extra {
			if ExtraHelp(f) == "" {
				t.Errorf("%s: extra field %q is undocumented", id, f)
			}
		}
		if why, ex := Excluded(id); ex {
			t.Errorf("%s is both offered and excluded (%s)", id, why)
		}
	}
	if _, ok := Lookup("twitter"); ok {
		t.Error("Lookup(twitter) should fail")
	}
}

func TestLookupReturnsACopy(t *testing.T) {
	s, _ := Lookup("auth0")
	s.Extra[0] = "changed"
	if again, _ := Lookup("auth0"); again.Extra[0] != "domain" {
		t.Fatalf("Lookup shares its Extra slice: %v", again.Extra)
	}
}

func TestBuildEveryProvider(t *testing.T) {
	for _, id := range IDs() {
		t.Run(id, func(t *testing.T) {
			cfg := fakeConfig(id)
			p, err := Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := Lookup(id); !slices.Equal(p.Spec.Extra, want.Extra) || p.Spec.Name != want.Name {
				t.Errorf("Spec = %+v, want %+v", p.Spec, want)
			}
			oc := p.OAuth2
			if oc.ClientID != cfg.ClientID || oc.ClientSecret != cfg.ClientSecret || oc.RedirectURL != cfg.CallbackURL {
				t.Errorf("credentials not carried: %+v", oc)
			}
			for _, e := range []string{oc.Endpoint.AuthURL, oc.Endpoint.TokenURL} {
				u, err := url.Parse(e)
				if err != nil || u.Scheme != "https" || u.Host == "" || !u.IsAbs() {
					t.Errorf("endpoint %q is not an absolute https URL", e)
				}
			}
			if p.Profile == nil || p.HTTPClient == nil || p.HTTPClient.Timeout != defaultTimeout {
				t.Errorf("Profile or default HTTPClient missing")
			}

			raw := p.AuthCodeURL("the-state", oauth2.S256ChallengeOption("the-verifier"))
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(raw, strings.SplitN(oc.Endpoint.AuthURL, "?", 2)[0]+"?") {
				t.Errorf("AuthCodeURL %q does not start at %q", raw, oc.Endpoint.AuthURL)
			}
			q := u.Query()
			for k, want := range map[string]string{
				"client_id": cfg.ClientID, "redirect_uri": cfg.CallbackURL, "state": "the-state",
				"response_type": "code", "code_challenge_method": "S256",
				"code_challenge": oauth2.S256ChallengeFromVerifier("the-verifier"),
			} {
				if q.Get(k) != want {
					t.Errorf("%s = %q, want %q in %s", k, q.Get(k), want, raw)
				}
			}
			for k := range p.AuthParams {
				if q.Get(k) != p.AuthParams.Get(k) {
					t.Errorf("AuthParams %s missing from %s", k, raw)
				}
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	with := func(id string, edit func(*Config)) Config {
		c := fakeConfig(id)
		edit(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"unknown id", Config{ID: "nope"}, []string{`"nope": unknown`, "github"}},
		{"excluded id", with("github", func(c *Config) { c.ID = "twitter" }), []string{"not offered", "OAuth 1.0a"}},
		{"missing client id", with("github", func(c *Config) { c.ClientID = " " }), []string{"missing client id"}},
		{"missing secret", with("github", func(c *Config) { c.ClientSecret = "" }), []string{"missing client secret"}},
		{"all at once", with("github", func(c *Config) { c.ClientID, c.ClientSecret, c.CallbackURL = "", "", "/cb" }),
			[]string{"missing client id", "missing client secret", `callback URL "/cb"`}},
		{"missing extra", with("auth0", func(c *Config) { c.Extra = nil }), []string{`missing extra field "domain"`, "Auth0 tenant domain"}},
		{"empty extra", with("azureadv2", func(c *Config) { c.Extra["tenant"] = " " }), []string{`missing extra field "tenant"`}},
		{"http extra URL", with("okta", func(c *Config) { c.Extra["org_url"] = "http://dev.okta.com" }), []string{`"org_url"`, "https URL"}},
		{"extra URL with query", with("nextcloud", func(c *Config) { c.Extra["url"] = "https://cloud.example.com/?x=1" }), []string{"https URL"}},
		{"URL as domain", with("auth0", func(c *Config) { c.Extra["domain"] = "https://x.auth0.com" }), []string{"bare host"}},
		{"path in domain", with("auth0", func(c *Config) { c.Extra["domain"] = "x.auth0.com/evil" }), []string{"bare host"}},
		{"bad tenant", with("azureadv2", func(c *Config) { c.Extra["tenant"] = "a/b" }), []string{"tenant id"}},
		{"unknown extra", with("github", func(c *Config) { c.Extra = map[string]string{"tenant": "x"} }), []string{`unknown extra field "tenant"`, "takes: none"}},
		{"scopes on naver", with("naver", func(c *Config) { c.Scopes = []string{"profile"} }), []string{"takes no scopes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(tc.cfg)
			if err == nil {
				t.Fatalf("Build succeeded: %+v", p.Spec)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestScopesAndAuthParams(t *testing.T) {
	build := func(cfg Config) *Provider {
		t.Helper()
		p, err := Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got := build(fakeConfig("github")).OAuth2.Scopes; !slices.Equal(got, []string{"read:user", "user:email"}) {
		t.Errorf("github default scopes = %v", got)
	}
	cfg := fakeConfig("github")
	cfg.Scopes = []string{" repo ", ""}
	if got := build(cfg).OAuth2.Scopes; !slices.Equal(got, []string{"repo"}) {
		t.Errorf("github configured scopes = %v", got)
	}
	if got := build(fakeConfig("twitch")).OAuth2.Scopes; !slices.Equal(got, []string{"user:read:email"}) {
		t.Errorf("twitch should keep goth's default scopes, got %v", got)
	}
	if got := build(fakeConfig("google")).AuthParams.Get("access_type"); got != "offline" {
		t.Errorf("google access_type = %q", got)
	}
	if got := build(fakeConfig("discord")).AuthParams.Get("prompt"); got != "none" {
		t.Errorf("discord prompt = %q", got)
	}
	// Options given to AuthCodeURL win over goth's parameters.
	if u := build(fakeConfig("discord")).AuthCodeURL("s", oauth2.SetAuthURLParam("prompt", "consent")); !strings.Contains(u, "prompt=consent") {
		t.Errorf("caller's prompt lost: %s", u)
	}
}

func TestExtraIsNormalised(t *testing.T) {
	cfg := fakeConfig("okta")
	cfg.Extra["org_url"] = " https://dev-1.okta.com/ "
	p, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.OAuth2.Endpoint.AuthURL, "https://dev-1.okta.com/oauth2/default/v1/authorize"; got != want {
		t.Errorf("AuthURL = %q, want %q", got, want)
	}
	cfg = fakeConfig("azureadv2")
	cfg.Extra["tenant"] = "contoso.onmicrosoft.com"
	if p, err = Build(cfg); err != nil {
		t.Fatal(err)
	}
	if got := p.OAuth2.Endpoint.TokenURL; got != "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token" {
		t.Errorf("TokenURL = %q", got)
	}
}
