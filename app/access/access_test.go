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
		{Hosts: []string{"open.example.com", "*.open.example.com"}, Anyone: true},
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
		{"corp.example.com", str("anyone@else.net"), false},     // *.x does not name x itself, and no rule names it
		{"evilcorp.example.com", str("anyone@else.net"), false}, // nor a name merely ending in it
		{"other.example.com", str("alice@example.com"), false},  // no rule names it: refused (issue 26 M1)
		{"203.0.113.5", str("alice@example.com"), false},        // a Host header the client chose
		{"open.example.com", nil, true},                         // anyone: every signed-in user, address or not
		{"a.open.example.com", str("x@else.net"), true},
		{"", str("alice@example.com"), false}, // host unknown: fail closed
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
