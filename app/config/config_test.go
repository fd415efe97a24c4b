package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// env is a fake environment.
func env(kv ...string) config.Env {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

var noEnv = env()

// catalogue is a fake goth catalogue: github and google need nothing extra,
// auth0 needs a domain.
func catalogue(id string) ([]string, bool) {
	switch id {
	case "github", "google", "gitlab":
		return nil, true
	case "auth0":
		return []string{"domain"}, true
	}
	return nil, false
}

func problems(t *testing.T, err error) config.Problems {
	t.Helper()
	require.Error(t, err)
	var p config.Problems
	require.True(t, errors.As(err, &p), "want Problems, got %T: %v", err, err)
	require.True(t, config.IsProblems(err))
	return p
}

// requireProblem checks that some problem matches every substring.
func requireProblem(t *testing.T, p config.Problems, subs ...string) {
	t.Helper()
	for _, line := range p {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			return
		}
	}
	t.Fatalf("no problem contains %q in:\n%s", subs, strings.Join(p, "\n"))
}

func TestDefaults(t *testing.T) {
	d := config.Defaults()
	require.Equal(t, "http://localhost:3000/api/auth", d.ServiceURL)
	require.Equal(t, 3000, d.Port)
	require.Equal(t, "data", d.DataDir)
	require.Empty(t, d.DatabaseURL)
	require.Empty(t, d.Secret)
	require.EqualValues(t, 64<<10, d.MaxBodyBytes)
	require.Equal(t, config.StrategyDatabase, d.Session.Strategy)
	require.Equal(t, 30*24*time.Hour, d.Session.MaxAge.D())
	require.Equal(t, 24*time.Hour, d.Session.UpdateAge.D())
	require.Equal(t, 30*24*time.Hour, d.Session.AbsoluteMaxAge.D(), "sessions end 30 days after sign-in by default")
	require.Equal(t, config.StyleNextAuth, d.Cookies.Style)
	require.Equal(t, filepath.Join("data", "latchkey.db"), d.DatabasePath())

	cfg, err := config.Load(nil, noEnv)
	require.NoError(t, err)
	require.Equal(t, d, cfg)
	for _, empty := range []string{"", "\n", "# only a comment\n", "---\n", "~\n"} {
		cfg, err = config.Load([]byte(empty), noEnv)
		require.NoError(t, err, "%q", empty)
		require.Equal(t, d, cfg, "%q", empty)
	}
}

// The shipped config.yaml documents the defaults: loading it changes nothing
// but the e-mail provider it enables.
func TestShippedConfigIsDefaults(t *testing.T) {
	data, err := os.ReadFile("../../config.yaml")
	require.NoError(t, err)
	cfg, err := config.Load(data, noEnv)
	require.NoError(t, err)
	want := config.Defaults()
	want.Providers = []config.Provider{{ID: "email", Type: config.TypeEmail}}
	want.AllowedRedirectOrigins = []string{}
	want.TrustedProxies = []string{}
	want.Access = []config.AccessRule{}
	want.Groups.Rules = []config.GroupRule{}
	want.Callbacks.AllowedEmailDomains = []string{}
	want.Webhooks.Endpoints = []config.WebhookEndpoint{}
	require.Equal(t, want, cfg)
	warnings, err := cfg.Validate(catalogue)
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "no SMTP server")
}

func TestFile(t *testing.T) {
	yaml := `
service_url: https://auth.example.com/idp/auth
port: 8080
data_dir: /var/lib/latchkey
database_url: sqlite:///var/lib/latchkey/db.sqlite?cache=shared
secret: 0123456789abcdef0123456789abcdef
providers:
  - id: github
    client_id: gh
    client_secret: ghs
    scopes: [read:user]
    authorization_params: {prompt: consent}
    allow_dangerous_email_account_linking: true
  - id: sso
    type: oidc
    name: Company SSO
    issuer: https://sso.example.com
    client_id: c
    client_secret: s
  - id: email
    type: email
    server: smtps://u:p@smtp.example.com:465
    from: "Sign in <no-reply@example.com>"
    max_age: 1d
    confirm: true
    rate_limit: {per_address: 3, per_ip: 10, window: 30m}
session:
  strategy: jwt
  max_age: 7d
  update_age: 1h
  absolute_max_age: 90d
cookies:
  style: authjs
pages:
  sign_in: /login
  error: https://app.example.com/error
callbacks:
  expose_user_id: true
  allowed_email_domains: [example.com]
allowed_redirect_origins: [https://app.example.com]
max_body_bytes: 4096
`
	cfg, err := config.Load([]byte(yaml), noEnv)
	require.NoError(t, err)
	require.Equal(t, "https://auth.example.com/idp/auth", cfg.ServiceURL)
	require.Equal(t, 8080, cfg.Port)
	require.Equal(t, "/var/lib/latchkey/db.sqlite", cfg.DatabasePath())
	require.Equal(t, "0123456789abcdef0123456789abcdef", cfg.Secret)
	require.Len(t, cfg.Providers, 3)
	// Load fills the default type, so nothing downstream decides it again.
	require.Equal(t, config.Provider{ID: "github", Type: config.TypeOAuth, ClientID: "gh", ClientSecret: "ghs", Scopes: []string{"read:user"},
		AuthorizationParams: map[string]string{"prompt": "consent"}, AllowDangerousEmailAccountLinking: true}, cfg.Providers[0])
	require.Equal(t, "https://sso.example.com", cfg.Providers[1].Issuer)
	require.Equal(t, 24*time.Hour, cfg.Providers[2].MaxAge.D())
	require.Equal(t, config.RateLimit{PerAddress: 3, PerIP: 10, Window: config.Duration(30 * time.Minute)}, cfg.Providers[2].RateLimit)
	require.Equal(t, config.Session{Strategy: "jwt", MaxAge: config.Duration(7 * 24 * time.Hour), UpdateAge: config.Duration(time.Hour), AbsoluteMaxAge: config.Duration(90 * 24 * time.Hour), RevocationPoll: config.Duration(time.Second), CacheTTL: config.Duration(time.Second), OutageGrace: config.Duration(2 * time.Minute)}, cfg.Session)
	require.Equal(t, config.StyleAuthJS, cfg.Cookies.Style)
	require.Equal(t, config.Pages{SignIn: "/login", Error: "https://app.example.com/error"}, cfg.Pages)
	require.Equal(t, config.Callbacks{ExposeUserID: true, AllowedEmailDomains: []string{"example.com"}}, cfg.Callbacks)
	require.EqualValues(t, 4096, cfg.MaxBodyBytes)
	_, err = cfg.Validate(catalogue)
	require.NoError(t, err)

	// Keys not in the file keep their defaults.
	cfg, err = config.Load([]byte("port: 4000\nsession:\n  strategy: jwt\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, 4000, cfg.Port)
	require.Equal(t, 30*24*time.Hour, cfg.Session.MaxAge.D())
	require.Equal(t, "http://localhost:3000/api/auth", cfg.ServiceURL)
}

func TestEnvPrecedence(t *testing.T) {
	file := []byte("service_url: http://file.example.com/auth\nsecret: file-secret-file-secret-file-secret\nport: 1111\ndatabase_url: file.db\n")
	secretFile := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secretFile, []byte("  secret-from-file-secret-from-file  \n"), 0o600))

	cases := []struct {
		name                     string
		env                      config.Env
		url, secret, databaseURL string
		port                     int
	}{
		{"file only", noEnv, "http://file.example.com/auth", "file-secret-file-secret-file-secret", "file.db", 1111},
		{"SERVICE_URL wins", env("SERVICE_URL", "https://a.example.com", "AUTH_URL", "https://b.example.com", "NEXTAUTH_URL", "https://c.example.com"),
			"https://a.example.com", "file-secret-file-secret-file-secret", "file.db", 1111},
		{"AUTH_URL next", env("AUTH_URL", "https://b.example.com", "NEXTAUTH_URL", "https://c.example.com"),
			"https://b.example.com", "file-secret-file-secret-file-secret", "file.db", 1111},
		{"NEXTAUTH_URL last", env("NEXTAUTH_URL", "https://c.example.com"), "https://c.example.com", "file-secret-file-secret-file-secret", "file.db", 1111},
		{"empty values are unset", env("SERVICE_URL", "", "AUTH_SECRET", "", "PORT", "", "DATABASE_URL", ""),
			"http://file.example.com/auth", "file-secret-file-secret-file-secret", "file.db", 1111},
		{"AUTH_SECRET wins", env("AUTH_SECRET", "env-a", "NEXTAUTH_SECRET", "env-b"),
			"http://file.example.com/auth", "env-a", "file.db", 1111},
		{"NEXTAUTH_SECRET next", env("NEXTAUTH_SECRET", "env-b", "AUTH_SECRET_FILE", ""),
			"http://file.example.com/auth", "env-b", "file.db", 1111},
		{"AUTH_SECRET_FILE last, trimmed", env("AUTH_SECRET_FILE", secretFile),
			"http://file.example.com/auth", "secret-from-file-secret-from-file", "file.db", 1111},
		{"PORT and DATABASE_URL", env("PORT", "9090", "DATABASE_URL", "sqlite://other.db"),
			"http://file.example.com/auth", "file-secret-file-secret-file-secret", "sqlite://other.db", 9090},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(file, tc.env)
			require.NoError(t, err)
			require.Equal(t, tc.url, cfg.ServiceURL)
			require.Equal(t, tc.secret, cfg.Secret)
			require.Equal(t, tc.databaseURL, cfg.DatabaseURL)
			require.Equal(t, tc.port, cfg.Port)
		})
	}
	// The environment applies over the defaults when there is no file.
	cfg, err := config.Load(nil, env("SERVICE_URL", "https://x.example.com", "PORT", "1234"))
	require.NoError(t, err)
	require.Equal(t, "https://x.example.com", cfg.ServiceURL)
	require.Equal(t, 1234, cfg.Port)
}

func TestEnvProblems(t *testing.T) {
	_, err := config.Load(nil, env("PORT", "eighty", "AUTH_SECRET_FILE", filepath.Join(t.TempDir(), "missing")))
	p := problems(t, err)
	requireProblem(t, p, "PORT", "eighty")
	requireProblem(t, p, "AUTH_SECRET_FILE")

	// A value beside its file: which one was meant is unknown, refused.
	file := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(file, []byte("secret-from-file-secret-from-file"), 0o600))
	for _, e := range []config.Env{
		env("AUTH_SECRET", "env-secret-env-secret-env-secret!", "AUTH_SECRET_FILE", file),
		env("NEXTAUTH_SECRET", "env-secret-env-secret-env-secret!", "AUTH_SECRET_FILE", file),
		env("AUTH_SECRET_1", "env-secret-env-secret-env-secret!", "AUTH_SECRET_1_FILE", file),
		env("TOKENS_CLIENT_SECRET", "env-secret-env-secret-env-secret!", "TOKENS_CLIENT_SECRET_FILE", file),
	} {
		_, err := config.Load(nil, e)
		p := problems(t, err)
		requireProblem(t, p, "_FILE: set beside")
		require.NotContains(t, err.Error(), "env-secret", "the value stays out of the message")
		require.NotContains(t, err.Error(), "secret-from-file")
	}
}

func TestExpansion(t *testing.T) {
	tricky := "&anchor: #not-a-comment 'q' \"dq\" *star !tag [x] {y} | > % @ `"
	yaml := `
service_url: ${URL}
port: ${PORT_NUMBER}
secret: ${SECRET}
data_dir: "${HOME_DIR}/data"
providers:
  - id: github
    client_id: ${GH_ID}
    client_secret: ${GH_SECRET}
    scopes: ["${SCOPE}", literal]
  - id: email
    type: email
    server: smtp://user:${SMTP_PASS}@smtp.example.com:587
    from: $NOT_EXPANDED
`
	e := env("URL", "https://auth.example.com", "PORT_NUMBER", "7000", "SECRET", tricky, "HOME_DIR", "/srv",
		"GH_ID", "id\nsecret: injected", "GH_SECRET", "  padded  ", "SCOPE", "user:email", "SMTP_PASS", "p#ss word")
	cfg, err := config.Load([]byte(yaml), e)
	require.NoError(t, err)
	require.Equal(t, "https://auth.example.com", cfg.ServiceURL)
	require.Equal(t, 7000, cfg.Port, "an expanded number is still a number")
	require.Equal(t, tricky, cfg.Secret, "the value is taken literally, never parsed as YAML")
	require.Equal(t, "/srv/data", cfg.DataDir)
	require.Equal(t, "id\nsecret: injected", cfg.Providers[0].ClientID, "no key injection through a value")
	require.Equal(t, "  padded  ", cfg.Providers[0].ClientSecret)
	require.Equal(t, []string{"user:email", "literal"}, cfg.Providers[0].Scopes)
	require.Equal(t, "smtp://user:p#ss word@smtp.example.com:587", cfg.Providers[1].Server)
	require.Equal(t, "$NOT_EXPANDED", cfg.Providers[1].From, "only ${VAR} is expanded")

	// An unset variable is empty, and an empty value keeps the default.
	cfg, err = config.Load([]byte("port: ${UNSET_PORT}\nsecret: ${UNSET_SECRET}\nservice_url: http://h${UNSET}/x\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, 3000, cfg.Port)
	require.Empty(t, cfg.Secret)
	require.Equal(t, "http://h/x", cfg.ServiceURL)

	// Keys are not expanded.
	_, err = config.Load([]byte("${KEY}: 1\n"), env("KEY", "port"))
	requireProblem(t, problems(t, err), "line 1", "${KEY}")
}

var lineRef = regexp.MustCompile(`\bline (\d+)\b`)

func TestUnknownKeys(t *testing.T) {
	yaml := `service_url: http://localhost:3000/api/auth
prot: 3000
session:
  strategy: jwt
  maxAge: 720h
providers:
  - id: github
    clientId: abc
    client_secret: s
  - id: email
    type: email
    smtp: smtp://x
cookies: {style: authjs, secure: true}
`
	_, err := config.Load([]byte(yaml), noEnv)
	p := problems(t, err)
	requireProblem(t, p, "line 2", "prot")
	requireProblem(t, p, "line 5", "maxAge")
	requireProblem(t, p, "line 8", "clientId")
	requireProblem(t, p, "line 12", "smtp")
	requireProblem(t, p, "line 13", "secure")
	require.Len(t, p, 5, "every unknown key, each once:\n%s", p.Error())
	for _, line := range p {
		require.Regexp(t, lineRef, line)
	}
}

func TestBadValuesAllAtOnce(t *testing.T) {
	yaml := `port: many
bogus: 1
session:
  max_age: 30x
  update_age: soon
providers:
  - id: email
    type: email
    max_age: forever
    rate_limit: {window: 1 hour}
max_body_bytes: lots
`
	_, err := config.Load([]byte(yaml), env("PORT", "NaN"))
	p := problems(t, err)
	requireProblem(t, p, "line 1", "many")
	requireProblem(t, p, "line 2", "bogus")
	requireProblem(t, p, "line 4", "30x")
	requireProblem(t, p, "line 5", "soon")
	requireProblem(t, p, "line 9", "forever")
	requireProblem(t, p, "line 10", "1 hour")
	requireProblem(t, p, "line 11", "lots")
	requireProblem(t, p, "PORT", "NaN")
	require.Len(t, p, 8, p.Error())
}

func TestSyntaxError(t *testing.T) {
	_, err := config.Load([]byte("port: [1\nsecret: x\n"), noEnv)
	require.Error(t, err)
	require.Contains(t, err.Error(), "line")
	_, err = config.Load([]byte("- a\n- b\n"), noEnv)
	require.Error(t, err, "the top level must be a mapping")
}

func TestValidateDefaults(t *testing.T) {
	cfg := config.Defaults()
	warnings, err := cfg.Validate(catalogue)
	require.NoError(t, err)
	require.Empty(t, warnings)
}

func TestValidateEveryProblem(t *testing.T) {
	cfg := config.Defaults()
	cfg.ServiceURL = "http://exa mple.com/auth"
	cfg.Port = 0
	cfg.Secret = "short"
	cfg.MaxBodyBytes = 10
	cfg.Session = config.Session{Strategy: "cookie", MaxAge: 0, UpdateAge: config.Duration(-time.Hour)}
	cfg.Cookies.Style = "v6"
	cfg.AllowedRedirectOrigins = []string{"https://ok.example.com", "evil", "https://x.example.com/path"}
	cfg.Pages = config.Pages{SignIn: "login", Error: "javascript:alert(1)"}
	cfg.Providers = []config.Provider{
		{ID: "nosuch", ClientID: "a", ClientSecret: "b"},
		{ID: "github"},
		{ID: "auth0", ClientID: "a", ClientSecret: "b"},
		{ID: "sso", Type: "oidc", ClientID: "a", ClientSecret: "b"},
		{ID: "mail", Type: "email", Server: "http://smtp.example.com", From: "not an address"},
		{ID: "mail", Type: "email"},
		{ID: "Bad ID", Type: "email"},
		{ID: "saml", Type: "saml"},
	}
	_, err := cfg.Validate(catalogue)
	p := problems(t, err)
	for _, want := range [][]string{
		{"service_url"},
		{"port", "0"},
		{"secret", "too short"},
		{"max_body_bytes"},
		{"session.strategy", "cookie"},
		{"session.max_age"},
		{"session.update_age"},
		{"cookies.style", "v6"},
		{"allowed_redirect_origins", "evil"},
		{"allowed_redirect_origins", "https://x.example.com/path"},
		{"pages.sign_in", "login"},
		{"pages.error", "javascript"},
		{"providers[0] (nosuch)", "not a known OAuth provider"},
		{"providers[1] (github)", "client_id is missing", "AUTH_GITHUB_ID"},
		{"providers[1] (github)", "client_secret is missing", "AUTH_GITHUB_SECRET"},
		{"providers[2] (auth0)", "extra.domain"},
		{"providers[3] (sso)", "issuer"},
		{"providers[4] (mail)", "server"},
		{"providers[4] (mail)", "from"},
		{"providers[5] (mail)", "duplicate"},
		{"providers[6] (Bad ID)", "lower-case"},
		{"providers[7] (saml)", "type"},
	} {
		requireProblem(t, p, want...)
	}
	require.Len(t, p, 22, p.Error())
}

func TestValidateRedactsSMTPPassword(t *testing.T) {
	cfg := config.Defaults()
	cfg.Providers = []config.Provider{{ID: "email", Type: "email", Server: "http://user:hunter2@smtp.example.com"}}
	_, err := cfg.Validate(catalogue)
	p := problems(t, err)
	require.NotContains(t, p.Error(), "hunter2")
}

func TestProviderCredentialsFromEnv(t *testing.T) {
	yaml := []byte(`providers:
  - id: github
  - id: my-idp
    type: oidc
  - id: gitlab
    client_id: from-file
    client_secret: from-file
  - id: email
    type: email
`)
	e := env("AUTH_GITHUB_ID", "gh-id", "AUTH_GITHUB_SECRET", "gh-secret",
		"AUTH_MY_IDP_ID", "idp-id", "AUTH_MY_IDP_SECRET", "idp-secret", "AUTH_MY_IDP_ISSUER", "https://idp.example.com",
		"AUTH_GITLAB_ID", "from-env", "AUTH_GITLAB_SECRET", "from-env",
		"AUTH_EMAIL_ID", "never", "AUTH_EMAIL_SECRET", "never")
	cfg, err := config.Load(yaml, e)
	require.NoError(t, err)
	require.Equal(t, "gh-id", cfg.Providers[0].ClientID)
	require.Equal(t, "gh-secret", cfg.Providers[0].ClientSecret)
	require.Equal(t, "idp-id", cfg.Providers[1].ClientID)
	require.Equal(t, "idp-secret", cfg.Providers[1].ClientSecret)
	require.Equal(t, "https://idp.example.com", cfg.Providers[1].Issuer)
	require.Equal(t, "from-file", cfg.Providers[2].ClientID, "the file's value wins; the environment is a fallback")
	require.Empty(t, cfg.Providers[3].ClientID, "e-mail providers take no OAuth credentials")
	_, err = cfg.Validate(catalogue)
	require.NoError(t, err)

	// Without the environment, the missing credentials are problems naming the variables.
	cfg, err = config.Load(yaml, noEnv)
	require.NoError(t, err)
	_, err = cfg.Validate(catalogue)
	p := problems(t, err)
	requireProblem(t, p, "github", "AUTH_GITHUB_ID")
	requireProblem(t, p, "github", "AUTH_GITHUB_SECRET")
	requireProblem(t, p, "my-idp", "AUTH_MY_IDP_ID")
	requireProblem(t, p, "my-idp", "issuer")
	require.Len(t, p, 5, p.Error())
}

func TestParseBase(t *testing.T) {
	good := []struct {
		in, origin, path string
		secure           bool
	}{
		{"http://localhost:3000/api/auth", "http://localhost:3000", "/api/auth", false},
		{"https://ex.com/custom/auth", "https://ex.com", "/custom/auth", true},
		{"https://ex.com/custom/auth/", "https://ex.com", "/custom/auth", true},
		{"http://localhost:3000/", "http://localhost:3000", "/api/auth", false},
		{"http://localhost:3000", "http://localhost:3000", "/api/auth", false},
		{"ex.com", "https://ex.com", "/api/auth", true}, // no scheme: https, as next-auth
		{"ex.com:8443/idp", "https://ex.com:8443", "/idp", true},
		{"  https://ex.com/a  ", "https://ex.com", "/a", true},
		{"https://ex.com/a%20b", "https://ex.com", "/a%20b", true},
		{"https://Auth.Example.COM:443/a", "https://auth.example.com", "/a", true}, // as new URL() writes the origin
		{"http://ex.com:80/a", "http://ex.com", "/a", false},
		{"https://ex.com:/a", "https://ex.com", "/a", true},
		{"https://ex.com:08443/a", "https://ex.com:8443", "/a", true},
		{"http://ex.com:443/a", "http://ex.com:443", "/a", false},
		{"https://[::1]:443/a", "https://[::1]", "/a", true},
		{"http://[::1]:3000/a", "http://[::1]:3000", "/a", false},
		// The path's dot segments resolved as new URL() resolves them
		// (written %2e too), so the routes are the paths browsers ask for.
		{"https://x/a/../auth", "https://x", "/auth", true},
		{"https://x/./auth", "https://x", "/auth", true},
		{"https://x/a/%2e%2E/auth", "https://x", "/auth", true},
		{"https://x/a/.%2e/auth", "https://x", "/auth", true},
		{"https://x/a/%2E/auth/", "https://x", "/a/auth", true},
		{"https://x/a/b/../../idp/./auth/", "https://x", "/idp/auth", true},
		{"https://x/a/..", "https://x", "/api/auth", true}, // "/": the default, as next-auth
		{"https://x/..", "https://x", "/api/auth", true},
		{"https://x/a/.../.b/..c", "https://x", "/a/.../.b/..c", true}, // not dot segments
		{"https://x/a/%2e%2e%2fb", "https://x", "/a/%2e%2e%2fb", true},
	}
	for _, tc := range good {
		b, err := config.ParseBase(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, config.Base{Origin: tc.origin, Path: tc.path, Secure: tc.secure}, b, tc.in)
		require.Equal(t, tc.origin+tc.path+"/signin", b.URL("/signin"))
	}
	for _, bad := range []string{"", "   ", "ftp://ex.com/auth", "javascript:alert(1)", "http://", "http:///auth",
		"http://user:pw@ex.com/auth", "http://ex.com/auth?x=1", "http://ex.com/auth#f", "http://exa mple.com", "http://ex.com:99999999/", `https://ex.com/a\..\auth`} {
		_, err := config.ParseBase(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{"720h": 720 * time.Hour, "30m": 30 * time.Minute, "30d": 30 * 24 * time.Hour,
		"1d": 24 * time.Hour, "0d": 0, "90s": 90 * time.Second, "1h30m": 90 * time.Minute, " 2d ": 48 * time.Hour, "-1h": -time.Hour}
	for in, want := range good {
		got, err := config.ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "30", "30x", "d", "1.5d", "1d12h", "soon", "2592000"} {
		_, err := config.ParseDuration(bad)
		require.Error(t, err, bad)
	}
}

func TestEnsureSecret(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")
	cfg := config.Defaults()
	cfg.DataDir = dir
	require.NoError(t, cfg.EnsureSecret())
	require.True(t, cfg.SecretGenerated)
	require.Regexp(t, `^[0-9a-f]{64}$`, cfg.Secret)

	path := filepath.Join(dir, "secret")
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the secret file is private")
	dst, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dst.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, cfg.Secret, strings.TrimSpace(string(b)))

	// A restart reuses it.
	again := config.Defaults()
	again.DataDir = dir
	require.NoError(t, again.EnsureSecret())
	require.Equal(t, cfg.Secret, again.Secret)
	require.True(t, again.SecretGenerated)
	b2, _ := os.ReadFile(path)
	require.Equal(t, b, b2, "the file is not rewritten")

	// A configured secret is used as is and nothing is written.
	other := config.Defaults()
	other.DataDir = filepath.Join(t.TempDir(), "untouched")
	other.Secret = "configured-configured-configured-x"
	require.NoError(t, other.EnsureSecret())
	require.False(t, other.SecretGenerated)
	require.Equal(t, "configured-configured-configured-x", other.Secret)
	_, err = os.Stat(other.DataDir)
	require.True(t, os.IsNotExist(err))

	// A generated secret passes validation.
	_, err = cfg.Validate(catalogue)
	require.NoError(t, err)
}

// Instances started together on one data folder (replicas sharing a
// volume) end up with one generated secret, the file's: none overwrites
// the secret another is already signing with, and none reads a file the
// other has only half written.
func TestEnsureSecretConcurrentStarts(t *testing.T) {
	for range 20 {
		dir := filepath.Join(t.TempDir(), "data")
		secrets := make([]string, 16)
		errs := make([]error, len(secrets))
		var wg sync.WaitGroup
		for i := range secrets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cfg := config.Defaults()
				cfg.DataDir = dir
				errs[i] = cfg.EnsureSecret()
				secrets[i] = cfg.Secret
			}()
		}
		wg.Wait()
		b, err := os.ReadFile(filepath.Join(dir, "secret"))
		require.NoError(t, err)
		for i := range secrets {
			require.NoError(t, errs[i])
			require.Equal(t, strings.TrimSpace(string(b)), secrets[i], "instance %d signs with a secret the file no longer holds", i)
		}
	}
}

func TestTrustEmail(t *testing.T) {
	cfg, err := config.Load([]byte(`
providers:
  - id: github
    client_id: gh
    client_secret: ghs
    trust_email: true
  - id: sso
    type: oidc
    issuer: https://sso.example.com
    client_id: c
    client_secret: s
    trust_email: true
  - id: gitlab
    client_id: gl
    client_secret: gls
  - id: email
    type: email
    trust_email: true
`), noEnv)
	require.NoError(t, err)
	require.True(t, cfg.Providers[0].TrustEmail)
	require.True(t, cfg.Providers[1].TrustEmail)
	require.False(t, cfg.Providers[2].TrustEmail, "off unless set")
	_, err = cfg.Validate(catalogue)
	p := problems(t, err)
	requireProblem(t, p, "providers[3] (email)", "trust_email")
	require.Len(t, p, 1, p.Error())
}

func TestValidateAbsoluteMaxAge(t *testing.T) {
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{"0", true},    // no limit
		{"720h", true}, // equal to max_age
		{"90d", true},
		{"7d", false}, // shorter than max_age (30d)
		{"-1h", false},
	} {
		cfg, err := config.Load([]byte("session:\n  absolute_max_age: "+tc.value+"\n"), noEnv)
		require.NoError(t, err, tc.value)
		_, err = cfg.Validate(catalogue)
		if tc.ok {
			require.NoError(t, err, tc.value)
			continue
		}
		requireProblem(t, problems(t, err), "session.absolute_max_age", "720h")
	}
	// An unset ${VAR} is not a silent 0 (no limit): the default stays.
	cfg, err := config.Load([]byte("session:\n  absolute_max_age: ${NOPE}\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, 30*24*time.Hour, cfg.Session.AbsoluteMaxAge.D())
}
