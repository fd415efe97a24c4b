package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
)

// The owner's proof wins (issue 26 M2): a user holding an address that an
// OAuth provider did not verify, who can sign in by that provider, does
// not block the address's owner. The owner's magic link, password sign-up
// and password reset each succeed into a new, verified user that inherits
// none of the claimant's linked accounts, and the claimant loses the
// address (and with it every e-mail access rule and Remote-Email).
func TestOwnerProofWinsOverUnverifiedClaimant(t *testing.T) {
	const addr = "victim@example.com"
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			// claim makes the attacker's user: the victim's address, typed at a
			// provider that does not verify it (emailVerified NULL), and linked.
			claim := func(e *env) *models.User {
				a := addr
				u := &models.User{Email: &a}
				require.NoError(t, e.app.Store().CreateUserWithAccount(ctx, u,
					&models.Account{Type: "oauth", Provider: "nextcloud", ProviderAccountID: "attacker"}))
				return u
			}
			// requireOwnerWon: addr belongs to a new verified user without the
			// claimant's account; the claimant keeps its account, not the address.
			requireOwnerWon := func(e *env, claimant *models.User) *models.User {
				owner, err := e.app.Store().UserByEmail(ctx, addr)
				require.NoError(t, err)
				require.NotEqual(t, claimant.ID, owner.ID, "the owner does not inherit the claimant's row")
				require.NotNil(t, owner.EmailVerified)
				accounts, err := e.app.Store().AccountsOf(ctx, owner.ID)
				require.NoError(t, err)
				require.Empty(t, accounts, "nor its linked accounts")
				after, err := e.app.Store().UserByID(ctx, claimant.ID)
				require.NoError(t, err)
				require.Nil(t, after.Email, "the claimant lost the address")
				accounts, err = e.app.Store().AccountsOf(ctx, claimant.ID)
				require.NoError(t, err)
				require.Len(t, accounts, 1)
				return owner
			}

			t.Run("magic link", func(t *testing.T) {
				e := startPasswords(t, b.opts(envOpts{}))
				claimant := claim(e)
				c := e.browser()
				e.signInByLink(c, addr) // was AccessDenied
				owner := requireOwnerWon(e, claimant)
				_, id := e.sessionUser(c)
				require.Equal(t, owner.ID, id)
			})
			t.Run("password sign-up", func(t *testing.T) {
				e := startPasswords(t, b.opts(envOpts{}))
				claimant := claim(e)
				owner := e.signUpFor(addr, goodPassword) // was "you already have an account"
				require.Equal(t, owner.ID, requireOwnerWon(e, claimant).ID)
				require.True(t, e.passwordIs(owner.ID, goodPassword))
				require.False(t, e.passwordIs(claimant.ID, goodPassword))
			})
			t.Run("password reset", func(t *testing.T) {
				e := startPasswords(t, b.opts(envOpts{}))
				claimant := claim(e)
				n := e.mailCount()
				res := e.form(e.browser(), "/reset", "email", addr)
				require.Equal(t, http.StatusOK, res.StatusCode, res.body)
				link, _ := e.flowLink(n+1, "/reset/confirm") // was the "no account" e-mail
				// The page does not offer to remove the claimant's identities:
				// the password goes to a new user, who has none; asked
				// anyway, nothing of the claimant's is touched.
				page := e.get(e.browser(), link)
				require.Equal(t, http.StatusOK, page.StatusCode)
				require.NotContains(t, page.body, `name="removeLinked"`)
				res = e.form(e.browser(), "/reset/confirm", "token", linkQuery(t, link).Get("token"), "password", goodPassword, "removeLinked", "1")
				require.Equal(t, http.StatusOK, res.StatusCode, res.body)
				owner := requireOwnerWon(e, claimant)
				require.True(t, e.passwordIs(owner.ID, goodPassword))
				require.False(t, e.passwordIs(claimant.ID, goodPassword))
				c := e.browser()
				require.Equal(t, http.StatusOK, e.passwordSignIn(c, addr, goodPassword).StatusCode)
				_, id := e.sessionUser(c)
				require.Equal(t, owner.ID, id)
			})
			t.Run("an unverified user with no way to sign in is claimed", func(t *testing.T) {
				e := startPasswords(t, b.opts(envOpts{}))
				u := e.addUser("Admin-made", addr, "") // no account, passkey or password
				c := e.browser()
				e.signInByLink(c, addr)
				_, id := e.sessionUser(c)
				require.Equal(t, u.ID, id, "the link verifies and signs into it, as before")
				require.EqualValues(t, 1, e.counts().Users)
			})
		})
	}
}
