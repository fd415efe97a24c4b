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
		require.Equal(t, tc.want, p.Allows(tc.host, tc.email, nil), "%s %v", tc.host, tc.email)
	}
	require.True(t, access.Policy{}.Allows("", nil, nil), "no rules: any signed-in user, host known or not")
	require.True(t, access.Policy{}.Empty())

	// The lists are in ASCII (config writes them so); an address is
	// compared in ASCII too, whichever way its domain is spelled, and one
	// whose domain is no name matches nothing.
	idn := access.New([]config.AccessRule{{Hosts: []string{"*"}, Domains: []string{"xn--bcher-kva.example"}, Emails: []string{"ada@xn--mnchen-3ya.de"}}})
	require.True(t, idn.Allows("app.example.com", str("x@Bücher.example"), nil))
	require.True(t, idn.Allows("app.example.com", str("x@xn--bcher-kva.example"), nil))
	require.True(t, idn.Allows("app.example.com", str("Ada@München.de"), nil))
	require.False(t, idn.Allows("app.example.com", str("bob@München.de"), nil))
	require.False(t, idn.Allows("app.example.com", str("x@bucher.example"), nil))
	require.False(t, idn.Allows("app.example.com", str("x@xn--bcher-kva.example.evil.net"), nil))

	all := access.New([]config.AccessRule{{Hosts: []string{"public.example.com"}, Domains: []string{"example.net"}}, {Hosts: []string{"*"}, Emails: []string{"root@example.com"}}})
	require.True(t, all.Allows("public.example.com", str("x@example.net"), nil))
	require.False(t, all.Allows("anything.example.com", str("x@example.net"), nil))
	require.True(t, all.Allows("anything.example.com", str("root@example.com"), nil))
}

// A rule with groups admits a member of any of them, address or not, in
// addition to its addresses and domains; names compare exactly, and the
// first rule naming the host still decides.
func TestPolicyGroups(t *testing.T) {
	str := func(s string) *string { return &s }
	p := access.New([]config.AccessRule{
		{Hosts: []string{"ops.example.com"}, Groups: []string{"ops", "admins"}},
		{Hosts: []string{"wiki.example.com"}, Domains: []string{"example.com"}, Groups: []string{"contractors"}},
		{Hosts: []string{"*"}, Groups: []string{"admins"}},
	})
	for _, tc := range []struct {
		host   string
		email  *string
		groups []string
		want   bool
	}{
		{"ops.example.com", nil, []string{"ops"}, true},
		{"ops.example.com", str("x@else.net"), []string{"a", "admins"}, true},
		{"ops.example.com", str("x@example.com"), nil, false},
		{"ops.example.com", nil, []string{"Ops", "OPS"}, false}, // case-sensitive
		{"ops.example.com", nil, []string{"contractors"}, false},
		{"wiki.example.com", str("x@example.com"), nil, true},
		{"wiki.example.com", nil, []string{"contractors"}, true},
		{"wiki.example.com", str("x@else.net"), []string{"ops"}, false},
		{"wiki.example.com", nil, []string{"admins"}, false}, // the first rule naming the host decides
		{"other.example.com", nil, []string{"admins"}, true},
		{"other.example.com", nil, []string{"ops"}, false},
		{"", nil, []string{"admins"}, false}, // host unknown: fail closed
	} {
		require.Equal(t, tc.want, p.Allows(tc.host, tc.email, tc.groups), "%s %v %v", tc.host, tc.email, tc.groups)
	}
}
