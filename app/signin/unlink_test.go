package signin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

// TestUnlinkAccounts: a reset or "sign out everywhere" that asks removes
// every linked identity when the user has another way to sign in (here
// e-mail sign-in to a verified address), and otherwise keeps the oldest
// one (never the last way in); another user's identities are never
// touched.
func TestUnlinkAccounts(t *testing.T) {
	ctx := context.Background()
	setup := func() (*store, *models.User, *models.User) {
		st := newStore()
		u, v := st.addUser("u@example.com"), st.addUser("v@example.com")
		for _, l := range []struct{ user, provider string }{{u.ID, "first"}, {u.ID, "second"}, {u.ID, "third"}, {v.ID, "first"}} {
			require.NoError(t, st.LinkAccount(ctx, &models.Account{UserID: l.user, Type: "oauth", Provider: l.provider, ProviderAccountID: l.user}))
		}
		return st, u, v
	}
	providers := func(st *store, userID string) []string {
		accs, err := st.AccountsOf(ctx, userID)
		require.NoError(t, err)
		var out []string
		for _, a := range accs {
			out = append(out, a.Provider)
		}
		return out
	}

	byEmail := signin.WaysOffered{Email: true}
	st, u, v := setup()
	now := time.Now()
	u.EmailVerified = &now
	n, kept, err := service(st).UnlinkAccounts(ctx, u.ID, byEmail)
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	require.False(t, kept)
	require.Empty(t, providers(st, u.ID), "another way to sign in: every link goes")
	require.Equal(t, []string{"first"}, providers(st, v.ID), "another user's link stays")

	st, u, _ = setup() // the address unverified: no way in by e-mail
	n, kept, err = service(st).UnlinkAccounts(ctx, u.ID, byEmail)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	require.True(t, kept)
	require.Equal(t, []string{"first"}, providers(st, u.ID), "no other way: the oldest link stays")

	n, kept, err = service(st).UnlinkAccounts(ctx, st.addUser("w@example.com").ID, byEmail)
	require.NoError(t, err)
	require.Zero(t, n, "no links: nothing to do")
	require.False(t, kept)
}
