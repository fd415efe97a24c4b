package access_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/access"
	"github.com/latchkey-auth/latchkey/app/config"
)

func TestPolicy(t *testing.T) {
	str := func(s string) *string { return &s }
	p := access.New([]config.AccessRule{
		{Hosts: []string{"App.Example.com"}, Emails: []string{"Alice@Example.com"}},
		{Hosts: []string{"*.corp.example.com"}, Domains: []string{"@example.com"}},
		{Hosts: []string{"app.example.com"}, Domains: []string{"example.org"}}, // shadowed by the first
	})
	for _, tc := range []struct {
		host  string
		email *string
		want  bool
	}{
		{"app.example.com", str("alice@example.com"), true},
		{"app.example.com", str("ALICE@example.COM"), true},
		{"app.example.com", str("bob@example.com"), false},
		{"app.example.com", str("bob@example.org"), false}, // the first rule naming the host decides
		{"app.example.com", nil, false},
		{"a.corp.example.com", str("bob@example.com"), true},
		{"a.b.corp.example.com", str("bob@Example.Com"), true},
		{"a.corp.example.com", str("bob@sub.example.com"), false},
		{"a.corp.example.com", str("bob@example.com.evil.net"), false},
		{"corp.example.com", str("anyone@else.net"), true},     // *.x does not name x itself
		{"evilcorp.example.com", str("anyone@else.net"), true}, // nor a name merely ending in it
		{"other.example.com", nil, true},                       // no rule names it
		{"", str("alice@example.com"), false},                  // host unknown: fail closed
	} {
		require.Equal(t, tc.want, p.Allows(tc.host, tc.email), "%s %v", tc.host, tc.email)
	}
	require.True(t, access.Policy{}.Allows("", nil), "no rules: any signed-in user, host known or not")
	require.True(t, access.Policy{}.Empty())

	all := access.New([]config.AccessRule{{Hosts: []string{"public.example.com"}, Domains: []string{"example.net"}}, {Hosts: []string{"*"}, Emails: []string{"root@example.com"}}})
	require.True(t, all.Allows("public.example.com", str("x@example.net")))
	require.False(t, all.Allows("anything.example.com", str("x@example.net")))
	require.True(t, all.Allows("anything.example.com", str("root@example.com")))
}
