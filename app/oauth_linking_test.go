package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
)

// twoProviders adds a second OIDC provider "other" on the same IdP.
func twoProviders(c *config.Config) {
	other := c.Providers[0]
	other.ID, other.Name = "other", "Other"
	c.Providers = append(c.Providers, other)
}

func user(sub, email string) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: sub, Email: email, PreferredUsername: sub}
}

// TestLinkingEndToEnd runs the riskiest rows of the linking table through a
// real IdP, HTTP and each database; app/signin's TestOAuthLinkingTable has
// every row.
func TestLinkingEndToEnd(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		t.Run("account linked to another user than the signed-in one: OAuthAccountNotLinked", func(t *testing.T) {
			e := startEnv(t, envOpts{postgres: pg}.oidc(twoProviders, nil))
			e.idp.QueueUser(user("y", "y@example.com"))
			e.signIn(e.following(e.browser()), "other", "/home") // Y owns other/y
			e.idp.QueueUser(user("x", "x@example.com"))
			e.idp.QueueUser(user("y", "y@example.com"))
			e.signIn(e.client, "idp", "/home") // X signs in
			requireChainEndsWith(t, e, e.client, "other", "OAuthAccountNotLinked")
			require.EqualValues(t, 2, e.counts().Users)
			require.EqualValues(t, 2, e.counts().Accounts)
		})

		t.Run("same e-mail, not linked: OAuthAccountNotLinked, nothing created", func(t *testing.T) {
			e := startEnv(t, envOpts{postgres: pg}.oidc(nil, nil))
			e.addUser("", "taken@example.com", "")
			e.idp.QueueUser(user("s9", "Taken@Example.com"))
			requireChainEndsWith(t, e, e.client, "idp", "OAuthAccountNotLinked")
			require.EqualValues(t, 1, e.counts().Users)
			require.Zero(t, e.counts().Accounts)
			require.Zero(t, e.counts().Sessions)
		})

		t.Run("otherwise: user and account created, new_user page", func(t *testing.T) {
			e := startEnv(t, envOpts{postgres: pg}.oidc(func(c *config.Config) { c.Pages.NewUser = "/welcome" }, nil))
			e.idp.QueueUser(user("new", "new@example.com"))
			e.idp.QueueUser(user("new", "new@example.com"))
			res := e.signIn(e.client, "idp", "/home")
			require.Equal(t, e.origin+"/welcome?callbackUrl="+url.QueryEscape(e.origin+"/home"), res.Header.Get("Location"))
			require.EqualValues(t, 1, e.counts().Users)
			acc := e.onlyAccount()
			require.Equal(t, "oidc", acc.Type)
			// store_tokens is off: the provider's tokens are not kept (issue #35).
			require.Nil(t, acc.AccessToken)
			require.Nil(t, acc.IDToken)
			// Second sign-in of the same account is not new: straight to the callback URL.
			require.Equal(t, e.origin+"/home", e.signIn(e.following(e.browser()), "idp", "/home").Header.Get("Location"))
		})
	})
}

func TestSignInHookOptions(t *testing.T) {
	t.Run("allowed_email_domains denies others with AccessDenied", func(t *testing.T) {
		e := startOIDC(t, func(c *config.Config) { c.Callbacks.AllowedEmailDomains = []string{"corp.example"} }, nil)
		e.idp.QueueUser(user("s1", "mallory@evil.example"))
		requireChainEndsWith(t, e, e.client, "idp", "AccessDenied")
		requireNothingCreated(t, e)
		e.idp.QueueUser(user("s2", "ann@corp.example"))
		require.Equal(t, e.origin+"/home", e.signIn(e.client, "idp", "/home").Header.Get("Location"))
	})
	t.Run("expose_user_id adds user.id to the session", func(t *testing.T) {
		for _, strategy := range strategies() {
			e := startOIDC(t, func(c *config.Config) {
				c.Callbacks.ExposeUserID = true
				c.Session.Strategy = strategy
			}, nil)
			e.signIn(e.client, "idp", "/home")
			u := e.onlyUser()
			s := e.session(e.client)
			require.Equal(t, u.ID, s["user"].(map[string]any)["id"], strategy)
		}
	})
	t.Run("by default the session has no user id", func(t *testing.T) {
		e := startOIDC(t, nil, nil)
		e.signIn(e.client, "idp", "/home")
		s := e.session(e.client)
		_, has := s["user"].(map[string]any)["id"]
		require.False(t, has)
	})
}

// requireChainEndsWith runs a sign-in and checks it ends at {base}/error?error=code.
func requireChainEndsWith(t *testing.T, e *env, c *http.Client, provider, code string) {
	t.Helper()
	res := e.signIn(stopAtError(c), provider, "/home")
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, e.base+"/error?error="+code, res.Header.Get("Location"))
}

// stopAtError follows the flow but stops before the error page.
func stopAtError(c *http.Client) *http.Client {
	cp := *c
	inner := c.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Path == "/api/auth/error" {
			return http.ErrUseLastResponse
		}
		return inner(req, via)
	}
	return &cp
}

// allow_dangerous_email_account_linking links a verified identity only to
// a user that owns its address. A user holding the address unverified
// with a way in of its own (here the account of a catalogue provider
// that does not verify addresses) may be whoever typed the victim's
// address there: linking the victim's verified identity to it would hand
// the attacker the victim's account (pre-hijacking). Refused with
// OAuthAccountNotLinked, nothing linked, no session; the owner's e-mail
// link still wins the address (owner_proof_test.go).
func TestDangerousLinkingSkipsUnprovedClaimant(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		e := startEnv(t, envOpts{postgres: pg}.oidc(func(c *config.Config) {
			c.Providers[0].AllowDangerousEmailAccountLinking = true
		}, nil))
		claimant := e.addUser("Attacker", "victim@example.com", "")
		require.NoError(t, e.app.Store().LinkAccount(context.Background(),
			&models.Account{UserID: claimant.ID, Type: "oauth", Provider: "gitea", ProviderAccountID: "attacker"}))
		e.idp.QueueUser(user("victim-sub", "victim@example.com")) // the IdP vouches for the address
		requireChainEndsWith(t, e, e.client, "idp", "OAuthAccountNotLinked")
		require.EqualValues(t, 1, e.counts().Users)
		require.EqualValues(t, 1, e.counts().Accounts, "the victim's identity is not linked to the claimant")
		require.Zero(t, e.counts().Sessions)
		require.Equal(t, map[string]any{}, e.session(e.client))
	})
}
