package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/admin"
	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/openidstore"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// `oidc rotate-keys [--now]` and `oidc keys`, on SQLite and PostgreSQL:
// the first rotation makes keys that sign at once; the next publishes
// new keys that sign after key_publish_lead and retires the old ones when
// the ID tokens they signed have expired; --now signs at once; a secret
// that does not open the stored keys, or none at all, is refused, as is
// a rotation that would sign before a pending one; nothing is changed by
// a refusal.
func TestAdminOIDCKeys(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			clearEnv(t)
			t.Chdir(t.TempDir())
			if dialect == "sqlite" {
				t.Setenv("DATABASE_URL", filepath.Join(t.TempDir(), "latchkey.db"))
			} else {
				t.Setenv("DATABASE_URL", pgtest.NewDatabase(t, postgresURL))
			}
			testAdminOIDCKeys(t)
		})
	}
}

var kidAlg = regexp.MustCompile(`([A-Za-z0-9_-]{16}) \((RS256|ES256)\)`)

// kidsOf are the "kid (alg)" pairs of a command's output, the RS256 one
// first.
func kidsOf(out string) [][]string {
	m := kidAlg.FindAllStringSubmatch(out, -1)
	sort.SliceStable(m, func(i, j int) bool { return m[i][2] == "RS256" && m[j][2] != "RS256" })
	return m
}

func testAdminOIDCKeys(t *testing.T) {
	cfgPath := writeFile(t, "oidc:\n  enabled: true\n  key_publish_lead: 2h\n  id_token_lifetime: 30m\n")
	code, _, stderr := runCmd("migrate")
	require.Equal(t, 0, code, stderr)
	cfg, _, err := loadConfig(cfgPath)
	require.NoError(t, err)
	store, err := models.Connect(app.StoreConfig(cfg))
	require.NoError(t, err)
	defer store.Close()
	ctx := context.Background()
	oidc := func(args ...string) (int, string, string) {
		return runCmd(append([]string{"--config", cfgPath, "oidc"}, args...)...)
	}
	keys := func() []openidstore.SigningKey {
		rows, err := openidstore.New(store).SigningKeys(ctx, time.Now())
		require.NoError(t, err)
		return rows
	}

	// No secret: refused (a key sealed with one made up here would be of
	// no use to the service).
	code, stdout, stderr := oidc("rotate-keys")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "no AUTH_SECRET set and no generated secret in")
	require.Empty(t, keys())

	t.Setenv("AUTH_SECRET", strings.Repeat("s", 40))
	code, stdout, _ = oidc("keys")
	require.Equal(t, 0, code)
	require.Equal(t, "KID  ALG  STATE  ACTIVE FROM  PUBLISHED UNTIL\n0 published keys (the service makes the first ones when it starts with oidc.enabled)\n", stdout)

	// The first keys sign at once.
	start := time.Now().UTC().Truncate(time.Second)
	code, stdout, stderr = oidc("rotate-keys")
	require.Equal(t, 0, code, stderr)
	first := kidsOf(stdout)
	require.Len(t, first, 2, stdout)
	require.Contains(t, stdout, "no keys existed: they sign at once")
	require.NotContains(t, stdout, "replace")
	code, stdout, _ = oidc("keys")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^`+first[0][1]+`\s+RS256\s+signing\s+\S+Z\s+-$`, stdout)
	require.Regexp(t, `(?m)^`+first[1][1]+`\s+ES256\s+published\s+\S+Z\s+-$`, stdout)

	// The next: published now, signing in 2h; the old ones published
	// until then + the ID token lifetime + a minute.
	code, stdout, stderr = oidc("rotate-keys")
	require.Equal(t, 0, code, stderr)
	second := kidsOf(stdout)
	require.Len(t, second, 2, stdout)
	signsFrom := regexpGroup(t, stdout, `they sign from (\S+Z) \(oidc.key_publish_lead 2h0m0s`)
	until := regexpGroup(t, stdout, `the keys they replace are published until (\S+Z) `)
	from, err := time.Parse(time.RFC3339, signsFrom)
	require.NoError(t, err)
	require.WithinDuration(t, start.Add(2*time.Hour), from, 5*time.Second)
	require.Equal(t, stamp(from.Add(31*time.Minute)), until)
	code, stdout, _ = oidc("keys", "--json")
	require.Equal(t, 0, code)
	var listed []admin.KeyJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &listed))
	require.Len(t, listed, 4)
	states := map[string]string{}
	for _, k := range listed {
		states[k.ID] = k.State
	}
	require.Equal(t, map[string]string{first[0][1]: "signing", first[1][1]: "published", second[0][1]: "next", second[1][1]: "next"}, states)
	require.Equal(t, until, stamp(*listed[0].PublishedUntil))

	// --now while keys of an earlier rotation are pending: refused.
	before := keys()
	code, stdout, stderr = oidc("rotate-keys", "--now")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "keys of an earlier rotation sign from "+signsFrom+", after the new ones would")
	// A secret that does not open the stored keys: refused.
	t.Setenv("AUTH_SECRET", strings.Repeat("t", 40))
	code, _, stderr = oidc("rotate-keys")
	require.Equal(t, 1, code)
	require.Equal(t, "latchkey: oidc rotate-keys: the secret here does not open the stored signing keys: run this command with the service's AUTH_SECRET (and AUTH_SECRET_1..3); nothing changed\n", stderr)
	require.Equal(t, before, keys())

	// --now once nothing is pending: signing at once.
	t.Setenv("AUTH_SECRET", strings.Repeat("s", 40))
	require.NoError(t, store.DB().Model(&openidstore.SigningKey{}).Where("active_from > ?", models.DBTime(time.Now())).
		Update("active_from", models.DBTime(time.Now().Add(-time.Minute))).Error)
	code, stdout, stderr = oidc("rotate-keys", "--now")
	require.Equal(t, 0, code, stderr)
	third := kidsOf(stdout)
	require.Len(t, third, 2, stdout)
	require.Contains(t, stdout, "they sign at once")
	code, stdout, _ = oidc("keys")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^`+third[0][1]+`\s+RS256\s+signing\s`, stdout)
	require.Regexp(t, `(?m)^`+second[0][1]+`\s+RS256\s+retired\s`, stdout)
	require.Regexp(t, `(?m)^`+first[0][1]+`\s+RS256\s+retired\s`, stdout)
	require.True(t, strings.HasSuffix(stdout, "6 published keys\n"))
	require.NotContains(t, stdout, "PRIVATE")

	code, stdout, _ = oidc("rotate-keys", "--help")
	require.Equal(t, 0, code)
	require.Equal(t, "usage: latchkey [--config FILE] oidc rotate-keys [--now]\n", stdout)
}

func regexpGroup(t *testing.T, s, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	require.Len(t, m, 2, "no %s in %s", pattern, s)
	return m[1]
}
