package signin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/oauth"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// TestOAuthLinkingTable is next-auth's account-linking table, row by row:
// who the identity is linked to, who the browser is signed in as, and
// whether a user with the profile's e-mail exists decide the outcome.
func TestOAuthLinkingTable(t *testing.T) {
	// U holds the identity when linked; V is another user.
	type world struct {
		linked     bool
		signedIn   string // "", "U" or "V"
		stale      bool   // that session signed in longer ago than the re-authentication window
		emailUser  bool   // a user W exists with the profile's e-mail
		dangerous  bool   // allow_dangerous_email_account_linking
		unverified bool   // the provider does not vouch for the profile's e-mail
		claimant   bool   // W holds the e-mail unverified and has an account of its own
	}
	cases := []struct {
		name      string
		w         world
		wantUser  string // "U", "V", "W", "new"
		wantCode  signin.Code
		wantLinks int // accounts after the sign-in
		// wantLinked: a new identity joined an existing user (its address is told)
		wantLinked bool
	}{
		{name: "linked, nobody signed in: sign in as its user", w: world{linked: true}, wantUser: "U", wantLinks: 1},
		{name: "linked, its user signed in: same user", w: world{linked: true, signedIn: "U"}, wantUser: "U", wantLinks: 1},
		{name: "linked, another user signed in: refused", w: world{linked: true, signedIn: "V"}, wantCode: signin.CodeOAuthAccountNotLinked, wantLinks: 1},
		{name: "linked, its user signed in long ago: same user (no re-authentication needed)", w: world{linked: true, signedIn: "U", stale: true}, wantUser: "U", wantLinks: 1},
		{name: "not linked, signed in: linked to the signed-in user", w: world{signedIn: "V"}, wantUser: "V", wantLinks: 1, wantLinked: true},
		{name: "not linked, signed in long ago: SessionRequired, nothing linked", w: world{signedIn: "V", stale: true}, wantCode: signin.CodeSessionRequired},
		{name: "not linked, signed in long ago, e-mail of another user: SessionRequired", w: world{signedIn: "V", stale: true, emailUser: true}, wantCode: signin.CodeSessionRequired},
		{name: "not linked, signed in, e-mail of another user: still the signed-in one", w: world{signedIn: "V", emailUser: true}, wantUser: "V", wantLinks: 1, wantLinked: true},
		{name: "not linked, e-mail of an existing user: refused", w: world{emailUser: true}, wantCode: signin.CodeOAuthAccountNotLinked},
		{name: "not linked, e-mail of an existing user, dangerous linking: linked to it", w: world{emailUser: true, dangerous: true}, wantUser: "W", wantLinks: 1, wantLinked: true},
		{name: "not linked, unverified e-mail of an existing user, dangerous linking: refused", w: world{emailUser: true, dangerous: true, unverified: true}, wantCode: signin.CodeOAuthAccountNotLinked},
		{name: "not linked, e-mail held unproved by a claimant, dangerous linking: refused", w: world{emailUser: true, dangerous: true, claimant: true}, wantCode: signin.CodeOAuthAccountNotLinked, wantLinks: 1},
		{name: "not linked, unknown e-mail: a new user", w: world{}, wantUser: "new", wantLinks: 1},
		{name: "not linked, unknown unverified e-mail: a new user, address not verified", w: world{unverified: true}, wantUser: "new", wantLinks: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore()
			u, v := st.addUser("u@example.com"), st.addUser("v@example.com")
			var w *models.User
			if tc.w.emailUser {
				w = st.addUser("profile@example.com")
			}
			if tc.w.claimant {
				require.NoError(t, st.LinkAccount(context.Background(), &models.Account{UserID: w.ID, Type: "oauth", Provider: "gitea", ProviderAccountID: "typed"}))
			}
			if tc.w.linked {
				require.NoError(t, st.LinkAccount(context.Background(), &models.Account{UserID: u.ID, Type: "oauth", Provider: "gh", ProviderAccountID: "42"}))
			}
			b := &browser{}
			switch tc.w.signedIn {
			case "U":
				b.user = u.ID
			case "V":
				b.user = v.ID
			}
			// Fresh: just inside the window; stale: just past it.
			b.since = now.Add(-10 * time.Minute)
			if tc.w.stale {
				b.since = now.Add(-10*time.Minute - time.Second)
			}
			users := len(st.users)

			out, err := service(st).OAuth(context.Background(), b, signin.OAuthIdentity{
				Provider:                          "gh",
				AllowDangerousEmailAccountLinking: tc.w.dangerous,
				Profile:                           oauth.Profile{ID: "42", Name: "P", Email: "profile@example.com", EmailVerified: !tc.w.unverified},
				Account:                           &models.Account{Type: "oauth", Provider: "gh", ProviderAccountID: "42"},
			})

			require.Len(t, st.accounts, tc.wantLinks)
			if tc.wantCode != "" {
				requireCode(t, err, tc.wantCode)
				require.Empty(t, b.started, "no session after a refusal")
				require.Len(t, st.users, users, "no user created after a refusal")
				require.Equal(t, map[string]string{"": "", "U": u.ID, "V": v.ID}[tc.w.signedIn], b.user, "the session is unchanged")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantLinked, out.Linked)
			want := map[string]*models.User{"U": u, "V": v, "W": w}[tc.wantUser]
			if tc.wantUser == "new" {
				require.True(t, out.IsNew)
				require.Len(t, st.users, users+1)
				require.Equal(t, "profile@example.com", *out.User.Email)
				require.Equal(t, "P", *out.User.Name)
				if tc.w.unverified {
					require.Nil(t, out.User.EmailVerified, "stored as unverified")
				} else {
					require.Equal(t, now, *out.User.EmailVerified)
				}
			} else {
				require.False(t, out.IsNew)
				require.Equal(t, want.ID, out.User.ID)
				require.Len(t, st.users, users)
			}
			require.Equal(t, out.User.ID, st.accounts["gh|42"].UserID, "the identity belongs to the signed-in user")
			require.Len(t, b.started, 1)
			require.Equal(t, out.User.ID, b.started[0].ID)
		})
	}
}

func TestOAuthSignInHook(t *testing.T) {
	ident := func() signin.OAuthIdentity {
		return signin.OAuthIdentity{Provider: "gh", Profile: oauth.Profile{ID: "7", Email: "new@example.com"},
			Account: &models.Account{Type: "oauth", Provider: "gh", ProviderAccountID: "7"}}
	}
	t.Run("refusal: AccessDenied, nothing written", func(t *testing.T) {
		st, b := newStore(), &browser{}
		s := service(st)
		var seen signin.SignInInput
		s.Hooks.SignIn = func(_ context.Context, in signin.SignInInput) (bool, string) { seen = in; return false, "" }
		_, err := s.OAuth(context.Background(), b, ident())
		requireCode(t, err, signin.CodeAccessDenied)
		require.Empty(t, st.users)
		require.Empty(t, st.accounts)
		require.Empty(t, b.started)
		require.Equal(t, "new@example.com", seen.Email)
		require.Equal(t, "oauth", seen.Type)
		require.Empty(t, seen.User.ID, "the hook sees the user the profile would create")
	})
	t.Run("redirect: the hook's target, nothing written", func(t *testing.T) {
		st, b := newStore(), &browser{}
		s := service(st)
		s.Hooks.SignIn = func(context.Context, signin.SignInInput) (bool, string) { return true, "/elsewhere" }
		_, err := s.OAuth(context.Background(), b, ident())
		var e *signin.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "/elsewhere", e.Redirect)
		require.Empty(t, st.users)
	})
	t.Run("allowed domains: the default hook checks the profile's e-mail", func(t *testing.T) {
		st := newStore()
		s := service(st)
		s.Hooks = signin.DefaultHooks(configWithDomains("example.org"))
		_, err := s.OAuth(context.Background(), &browser{}, ident())
		requireCode(t, err, signin.CodeAccessDenied)
	})
	t.Run("allowed domains: only a verified address counts", func(t *testing.T) {
		s := service(newStore())
		s.Hooks = signin.DefaultHooks(configWithDomains("example.com"))
		in := ident()
		in.Profile.EmailVerified = true
		_, err := s.OAuth(context.Background(), &browser{}, in)
		require.NoError(t, err)

		s = service(newStore())
		s.Hooks = signin.DefaultHooks(configWithDomains("example.com"))
		in = ident()
		in.Profile.EmailVerified = false
		_, err = s.OAuth(context.Background(), &browser{}, in)
		requireCode(t, err, signin.CodeAccessDenied)
	})
}

func TestOAuthFailures(t *testing.T) {
	ident := func() signin.OAuthIdentity {
		return signin.OAuthIdentity{Provider: "gh", Profile: oauth.Profile{ID: "7", Email: "new@example.com"},
			Account: &models.Account{Type: "oauth", Provider: "gh", ProviderAccountID: "7"}}
	}
	cases := []struct {
		name  string
		setup func(*store, *browser, *signin.Service)
		code  signin.Code
	}{
		{"current session unreadable", func(_ *store, b *browser, _ *signin.Service) { b.readErr = errBoom }, signin.CodeCallback},
		{"user creation fails", func(st *store, _ *browser, _ *signin.Service) { st.failCreate = errBoom }, signin.CodeOAuthCreateAccount},
		{"user creation conflicts", func(st *store, _ *browser, _ *signin.Service) { st.failCreate = models.ErrConflict }, signin.CodeOAuthAccountNotLinked},
		{"linking to the signed-in user fails", func(st *store, b *browser, _ *signin.Service) {
			b.user, b.since = st.addUser("me@example.com").ID, now
			st.failLink = errBoom
		}, signin.CodeOAuthAccountNotLinked},
		{"session cannot start", func(_ *store, b *browser, _ *signin.Service) { b.startErr = errBoom }, signin.CodeCallback},
		{"JWT hook returns no token", func(_ *store, _ *browser, s *signin.Service) {
			s.JWTSessions = true
			s.Hooks.JWT = func(map[string]any, signin.JWTInput) map[string]any { return nil }
		}, signin.CodeAccessDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, b := newStore(), &browser{}
			s := service(st)
			tc.setup(st, b, s)
			_, err := s.OAuth(context.Background(), b, ident())
			requireCode(t, err, tc.code)
			require.Empty(t, b.started)
		})
	}
}

func TestOAuthJWTClaims(t *testing.T) {
	st, b := newStore(), &browser{}
	s := service(st)
	s.JWTSessions = true
	var triggers []string
	s.Hooks.JWT = func(tok map[string]any, in signin.JWTInput) map[string]any {
		triggers = append(triggers, in.Trigger)
		tok["role"] = "admin"
		return tok
	}
	in := signin.OAuthIdentity{Provider: "gh", Profile: oauth.Profile{ID: "9", Email: "j@example.com", Name: "J"},
		Account: &models.Account{Type: "oauth", Provider: "gh", ProviderAccountID: "9"}}
	out, err := s.OAuth(context.Background(), b, in)
	require.NoError(t, err)
	in.Account = &models.Account{Type: "oauth", Provider: "gh", ProviderAccountID: "9"}
	_, err = s.OAuth(context.Background(), &browser{}, in)
	require.NoError(t, err)
	require.Equal(t, []string{"signUp", "signIn"}, triggers)
	require.Equal(t, "admin", b.claims[0]["role"])
	require.Equal(t, out.User.ID, b.claims[0]["sub"])
	require.Equal(t, "j@example.com", *b.claims[0]["email"].(*string))
}
