package signin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/signin"
)

// boundTo is an OpenedLink.Bound for a browser holding the bindings of the
// given tokens (by their stored hash, as the fake service hashes them).
func boundTo(tokens ...string) func(string) bool {
	return func(hash string) bool {
		for _, t := range tokens {
			if hash == "hash:"+t {
				return true
			}
		}
		return false
	}
}

// Opening a link signs in at once only in the browser bound to it: anywhere
// else the link comes back pending, unspent, naming the stored address.
func TestOpenLink(t *testing.T) {
	t.Run("bound: signed in, link spent", func(t *testing.T) {
		st, b := newStore(), &browser{}
		s := service(st)
		tok := issue(t, s, "a@example.com")
		out, pending, err := s.OpenLink(context.Background(), b, signin.OpenedLink{Provider: "email", Token: tok, Email: "a@example.com", Bound: boundTo(tok)})
		require.NoError(t, err)
		require.Nil(t, pending)
		require.Equal(t, "a@example.com", *out.User.Email)
		require.Equal(t, "hash:"+tok, out.LinkHash)
		require.Len(t, b.started, 1)
		require.Empty(t, st.tokens)
	})
	for name, bound := range map[string]func(string) bool{
		"no binding at all":            nil,
		"bindings of other links only": boundTo("another-token"),
	} {
		t.Run(name+": pending, nothing spent, stored address", func(t *testing.T) {
			st, b := newStore(), &browser{}
			s := service(st)
			tok := issue(t, s, "attacker@example.com")
			for _, param := range []string{"", "attacker@example.com", "victim@example.com"} {
				out, pending, err := s.OpenLink(context.Background(), b, signin.OpenedLink{Provider: "email", Token: tok, Email: param, Bound: bound})
				require.NoError(t, err, "email=%q", param)
				require.Nil(t, out)
				require.Equal(t, &signin.PendingLink{Identifier: "attacker@example.com", TokenHash: "hash:" + tok, Expires: now.Add(time.Hour)}, pending,
					"the stored address, whatever email=%q says", param)
			}
			require.Contains(t, st.tokens, "hash:"+tok)
			require.Empty(t, st.users)
			require.Empty(t, b.started)

			// The confirm page's click (RedeemLink) then signs in.
			out, err := s.RedeemLink(context.Background(), b, "email", tok, "")
			require.NoError(t, err)
			require.Equal(t, "attacker@example.com", *out.User.Email)
		})
	}
	t.Run("confirm: true asks the bound browser too", func(t *testing.T) {
		st, b := newStore(), &browser{}
		s := service(st)
		tok := issue(t, s, "a@example.com")
		out, pending, err := s.OpenLink(context.Background(), b, signin.OpenedLink{Provider: "email", Token: tok, Bound: boundTo(tok), Confirm: true})
		require.NoError(t, err)
		require.Nil(t, out)
		require.Equal(t, "a@example.com", pending.Identifier)
		require.Contains(t, st.tokens, "hash:"+tok)
	})
}

// A dead token has nothing to confirm: Verification, bound or not, and a
// bound browser's refusals leave the link usable as RedeemLink's do.
func TestOpenLinkRefusals(t *testing.T) {
	cases := []struct {
		name  string
		token func(string) string
		addr  string
		bound bool
		setup func(*signin.Service)
		code  signin.Code
	}{
		{"unknown token, no binding", func(string) string { return "nope" }, "", false, nil, signin.CodeVerification},
		{"unknown token, bound", func(string) string { return "nope" }, "", true, nil, signin.CodeVerification},
		{"expired, no binding", nil, "", false, func(s *signin.Service) { s.Now = func() time.Time { return now.Add(2 * time.Hour) } }, signin.CodeVerification},
		{"expired, bound", nil, "", true, func(s *signin.Service) { s.Now = func() time.Time { return now.Add(2 * time.Hour) } }, signin.CodeVerification},
		{"bound, e-mail parameter of another address", nil, "eve@example.com", true, nil, signin.CodeVerification},
		{"bound, hook refuses", nil, "", true, func(s *signin.Service) {
			s.Hooks.SignIn = func(context.Context, signin.SignInInput) (bool, string) { return false, "" }
		}, signin.CodeAccessDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, b := newStore(), &browser{}
			s := service(st)
			tok := issue(t, s, "a@example.com")
			if tc.setup != nil {
				tc.setup(s)
			}
			use := tok
			if tc.token != nil {
				use = tc.token(tok)
			}
			in := signin.OpenedLink{Provider: "email", Token: use, Email: tc.addr}
			if tc.bound {
				in.Bound = boundTo(use)
			}
			out, pending, err := s.OpenLink(context.Background(), b, in)
			requireCode(t, err, tc.code)
			require.Nil(t, out)
			require.Nil(t, pending)
			require.Contains(t, st.tokens, "hash:"+tok, "the link is not spent")
			require.Empty(t, st.users)
			require.Empty(t, b.started)
		})
	}
}

// LookUpLink reads without spending.
func TestLookUpLink(t *testing.T) {
	st := newStore()
	s := service(st)
	tok := issue(t, s, "a@example.com")
	for range 2 {
		link, err := s.LookUpLink(context.Background(), tok)
		require.NoError(t, err)
		require.Equal(t, "a@example.com", link.Identifier)
	}
	require.Contains(t, st.tokens, "hash:"+tok)
	_, err := s.LookUpLink(context.Background(), "nope")
	requireCode(t, err, signin.CodeVerification)
}
