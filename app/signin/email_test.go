package signin_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

func configWithDomains(d ...string) config.Callbacks { return config.Callbacks{AllowedEmailDomains: d} }

// limiter refuses after n requests; with err set it cannot be asked.
type limiter struct {
	left int
	err  error
}

func (l *limiter) Allow(context.Context, email.Request, time.Time) (bool, string, error) {
	if l.err != nil {
		return false, "", l.err
	}
	l.left--
	return l.left >= 0, "test limit", nil
}

func emailProvider(m *mailer) signin.EmailProvider {
	return signin.EmailProvider{ID: "email", MaxAge: time.Hour, Endpoint: "https://auth.example.com/api/auth/callback/email", Mailer: m}
}

// sentToken is the token of the last link m sent.
func sentToken(t *testing.T, m *mailer) string {
	t.Helper()
	require.NotEmpty(t, m.links)
	last := m.links[len(m.links)-1]
	u, err := url.Parse(last[strings.IndexByte(last, ' ')+1:])
	require.NoError(t, err)
	return u.Query().Get("token")
}

func TestSendLink(t *testing.T) {
	st, m := newStore(), &mailer{}
	sent, err := service(st).SendLink(context.Background(), emailProvider(m), signin.LinkRequest{Email: " Alice@Example.COM ", CallbackURL: "https://app.example.com/x"})
	require.NoError(t, err)
	require.Len(t, m.links, 1)
	require.True(t, strings.HasPrefix(m.links[0], "alice@example.com https://auth.example.com/api/auth/callback/email?callbackUrl=https%3A%2F%2Fapp.example.com%2Fx&token="), m.links[0])
	tok := sentToken(t, m)
	row, ok := st.tokens["hash:"+tok]
	require.True(t, ok, "only the hash is stored")
	require.Equal(t, "alice@example.com", row.Identifier)
	require.Equal(t, now.Add(time.Hour), row.Expires)
	require.Equal(t, &signin.SentLink{TokenHash: "hash:" + tok, Expires: now.Add(time.Hour)}, sent, "what the browser is bound to")
}

func TestSendLinkRefusals(t *testing.T) {
	cases := []struct {
		name  string
		email string
		setup func(*signin.Service, *signin.EmailProvider, *mailer)
		code  signin.Code
	}{
		{"malformed address", "not-an-address", nil, signin.CodeEmailSignin},
		{"rate limited", "a@example.com", func(_ *signin.Service, p *signin.EmailProvider, _ *mailer) { p.Limits = &limiter{left: 0} }, signin.CodeEmailSignin},
		// The counters are in the database: while it is down nothing is
		// sent, and the user is told to try again, not that the address
		// was refused.
		{"limits cannot be checked: refused, try again", "a@example.com", func(_ *signin.Service, p *signin.EmailProvider, _ *mailer) {
			p.Limits = &limiter{left: 100, err: errBoom}
		}, signin.CodeTryLater},
		{"hook refuses", "a@example.com", func(s *signin.Service, _ *signin.EmailProvider, _ *mailer) {
			s.Hooks.SignIn = func(_ context.Context, in signin.SignInInput) (bool, string) { return !in.VerificationRequest, "" }
		}, signin.CodeAccessDenied},
		{"domain not allowed", "a@example.com", func(s *signin.Service, _ *signin.EmailProvider, _ *mailer) {
			s.Hooks = signin.DefaultHooks(configWithDomains("example.org"))
		}, signin.CodeAccessDenied},
		{"delivery fails: the row is removed", "a@example.com", func(_ *signin.Service, _ *signin.EmailProvider, m *mailer) { m.err = errBoom }, signin.CodeEmailSignin},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, m := newStore(), &mailer{}
			s, p := service(st), emailProvider(m)
			if tc.setup != nil {
				tc.setup(s, &p, m)
			}
			sent, err := s.SendLink(context.Background(), p, signin.LinkRequest{Email: tc.email})
			requireCode(t, err, tc.code)
			require.Nil(t, sent, "nothing to bind")
			require.Empty(t, st.tokens, "nothing stored")
			require.Empty(t, m.links, "nothing sent")
		})
	}
}

// issue sends a link for addr and returns its token.
func issue(t *testing.T, s *signin.Service, addr string) string {
	t.Helper()
	m := &mailer{}
	_, err := s.SendLink(context.Background(), emailProvider(m), signin.LinkRequest{Email: addr})
	require.NoError(t, err)
	return sentToken(t, m)
}

func TestRedeemLink(t *testing.T) {
	t.Run("a new address: user created and verified, session started, link spent", func(t *testing.T) {
		st, b := newStore(), &browser{}
		s := service(st)
		tok := issue(t, s, "new@example.com")
		out, err := s.RedeemLink(context.Background(), b, "email", tok, "new@example.com")
		require.NoError(t, err)
		require.True(t, out.IsNew)
		require.Equal(t, "hash:"+tok, out.LinkHash, "the binding to drop")
		require.Equal(t, now, *out.User.EmailVerified)
		require.Len(t, b.started, 1)
		require.Empty(t, st.tokens)
		_, err = s.RedeemLink(context.Background(), &browser{}, "email", tok, "")
		requireCode(t, err, signin.CodeVerification)
	})
	t.Run("an existing user: signed in, not new", func(t *testing.T) {
		st := newStore()
		u := st.addUser("old@example.com")
		s := service(st)
		out, err := s.RedeemLink(context.Background(), &browser{}, "email", issue(t, s, "old@example.com"), "")
		require.NoError(t, err)
		require.False(t, out.IsNew)
		require.Equal(t, u.ID, out.User.ID)
	})
	t.Run("another user's database session in the browser is ended", func(t *testing.T) {
		st := newStore()
		other := st.addUser("other@example.com")
		s := service(st)
		b := &browser{user: other.ID}
		_, err := s.RedeemLink(context.Background(), b, "email", issue(t, s, "me@example.com"), "")
		require.NoError(t, err)
		require.Equal(t, []string{other.ID}, b.endedUser)
	})
	t.Run("with JWT sessions the cookie is just replaced", func(t *testing.T) {
		st := newStore()
		other := st.addUser("other@example.com")
		s := service(st)
		s.JWTSessions = true
		b := &browser{user: other.ID}
		_, err := s.RedeemLink(context.Background(), b, "email", issue(t, s, "me@example.com"), "")
		require.NoError(t, err)
		require.Empty(t, b.endedUser)
	})
}

func TestRedeemLinkRefusalsKeepTheLink(t *testing.T) {
	cases := []struct {
		name  string
		token func(string) string
		addr  string
		setup func(*signin.Service)
		code  signin.Code
	}{
		{"unknown token", func(string) string { return "nope" }, "", nil, signin.CodeVerification},
		{"e-mail parameter of another address", nil, "eve@example.com", nil, signin.CodeVerification},
		{"expired", nil, "", func(s *signin.Service) { s.Now = func() time.Time { return now.Add(2 * time.Hour) } }, signin.CodeVerification},
		{"hook refuses", nil, "", func(s *signin.Service) {
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
			_, err := s.RedeemLink(context.Background(), b, "email", use, tc.addr)
			requireCode(t, err, tc.code)
			require.Contains(t, st.tokens, "hash:"+tok, "the link is not spent")
			require.Empty(t, st.users, "no user created")
			require.Empty(t, b.started)
		})
	}
}

// TestRedeemLinkOwnerWinsOverUnverifiedOAuthUser: an attacker signed up at
// a provider that does not verify e-mail, typing the victim's address; the
// victim's later magic link must not sign into that user, nor be refused
// (issue 26 M2): the hook is shown a new user, and the victim signs into a
// new one, while the claimant loses the address.
func TestRedeemLinkOwnerWinsOverUnverifiedOAuthUser(t *testing.T) {
	st, b := newStore(), &browser{}
	s := service(st)
	claimant, err := s.OAuth(context.Background(), &browser{}, signin.OAuthIdentity{Provider: "nextcloud",
		Profile: oauth.Profile{ID: "evil", Email: "victim@example.com"},
		Account: &models.Account{Type: "oauth", Provider: "nextcloud", ProviderAccountID: "evil"}})
	require.NoError(t, err)
	var seen []signin.SignInInput
	s.Hooks.SignIn = func(_ context.Context, in signin.SignInInput) (bool, string) {
		seen = append(seen, in)
		return true, ""
	}
	tok := issue(t, s, "victim@example.com")
	out, err := s.RedeemLink(context.Background(), b, "email", tok, "")
	require.NoError(t, err)
	require.True(t, out.IsNew, "the owner gets a new user")
	require.NotEqual(t, claimant.User.ID, out.User.ID)
	require.NotNil(t, out.User.EmailVerified)
	require.Equal(t, "victim@example.com", *out.User.Email)
	require.Nil(t, st.users[claimant.User.ID].Email, "the claimant lost the address")
	require.Equal(t, "victim@example.com", seen[len(seen)-1].User.ID, "the hook saw the stand-in of a new address")
	require.Len(t, b.started, 1)
	require.True(t, b.started[0].EmailVerified)

	// A provider that verifies the address makes the user reachable by link.
	st2 := newStore()
	s = service(st2)
	_, err = s.OAuth(context.Background(), &browser{}, signin.OAuthIdentity{Provider: "google",
		Profile: oauth.Profile{ID: "g", Email: "owner@example.com", EmailVerified: true},
		Account: &models.Account{Type: "oauth", Provider: "google", ProviderAccountID: "g"}})
	require.NoError(t, err)
	out, err = s.RedeemLink(context.Background(), &browser{}, "email", issue(t, s, "owner@example.com"), "")
	require.NoError(t, err)
	require.False(t, out.IsNew)
}

// TestRedeemLinkRestoresTokenWhenSessionFails: the link was consumed in the
// redeeming transaction, but no session started, so it is put back.
func TestRedeemLinkRestoresTokenWhenSessionFails(t *testing.T) {
	st, b := newStore(), &browser{startErr: errBoom}
	s := service(st)
	tok := issue(t, s, "a@example.com")
	_, err := s.RedeemLink(context.Background(), b, "email", tok, "")
	requireCode(t, err, signin.CodeCallback)
	row, ok := st.tokens["hash:"+tok]
	require.True(t, ok, "the link works again")
	require.Equal(t, now.Add(time.Hour), row.Expires, "with its original expiry")

	// And when even the restore fails, the cause says so.
	st.tokens = map[string]models.VerificationToken{}
	tok = issue(t, s, "a@example.com")
	st.failRestore = errBoom
	_, err = s.RedeemLink(context.Background(), b, "email", tok, "")
	requireCode(t, err, signin.CodeCallback)
	require.ErrorContains(t, err, "could not be restored")
}

// TestRedeemLinkAfterSecretRotation: a link sent before a secret rotation
// is stored under the old secret's hash; it still redeems, once.
func TestRedeemLinkAfterSecretRotation(t *testing.T) {
	st := newStore()
	s := service(st)
	s.TokenHashes = func(token string) []string { return []string{"old:" + token} }
	tok := issue(t, s, "a@example.com")
	s.TokenHashes = func(token string) []string { return []string{"new:" + token, "old:" + token} }
	_, err := s.RedeemLink(context.Background(), &browser{}, "email", tok, "")
	require.NoError(t, err)
	require.Empty(t, st.tokens)
	_, err = s.RedeemLink(context.Background(), &browser{}, "email", tok, "")
	requireCode(t, err, signin.CodeVerification)
}

// allowed_email_domains is in ASCII (config writes it so); a verified
// address is compared in ASCII too, and one whose domain is no name is
// refused.
func TestAllowedDomainsCompareInASCII(t *testing.T) {
	hook := signin.DefaultHooks(configWithDomains("xn--bcher-kva.example")).SignIn
	for addr, want := range map[string]bool{
		"x@Bücher.example":        true,
		"x@xn--bcher-kva.example": true,
		"x@bucher.example":        false,
		"x@xn--zz.example":        false,
	} {
		ok, _ := hook(context.Background(), signin.SignInInput{Email: addr, EmailVerified: true})
		if ok != want {
			t.Errorf("SignIn(%q) = %v, want %v", addr, ok, want)
		}
	}
}
