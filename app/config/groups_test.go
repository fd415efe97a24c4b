package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
)

// Group names: 1 to 64 of letters, digits, '.', '_', ':' and '-'; nothing
// a header list or a claim would need to escape.
func TestValidGroupName(t *testing.T) {
	for _, ok := range []string{"staff", "Admins", "ops:on-call", "a.b_c", "0", strings.Repeat("g", 64)} {
		require.True(t, config.ValidGroupName(ok), ok)
	}
	for _, bad := range []string{"", strings.Repeat("g", 65), "a,b", "a b", "é", "a/b", "a\n", "@staff"} {
		require.False(t, config.ValidGroupName(bad), bad)
	}
}

// Group rules are checked at start-up, every problem at once.
func TestGroupRules(t *testing.T) {
	cfg := config.Defaults()
	cfg.Groups.Rules = []config.GroupRule{{Domains: []string{"example.com", "@Example.org"}, Groups: []string{"staff", "everyone"}}}
	_, err := cfg.Validate(catalogue)
	require.NoError(t, err)

	cfg.Groups.Rules = []config.GroupRule{
		{Groups: []string{"staff"}},
		{Domains: []string{"example.com"}},
		{Domains: []string{"*.example.com", "https://example.com"}, Groups: []string{"a,b", "ok"}},
	}
	_, err = cfg.Validate(catalogue)
	p := problems(t, err)
	requireProblem(t, p, "groups.rules[0]: domains is empty")
	requireProblem(t, p, "groups.rules[1]: groups is empty")
	requireProblem(t, p, `groups.rules[2]: domain "*.example.com" must be a domain`)
	requireProblem(t, p, `groups.rules[2]: domain "https://example.com" must be a domain`)
	requireProblem(t, p, `groups.rules[2]: group "a,b" must be 1 to 64 letters`)
	require.Len(t, p, 5, "%q", p)
}
