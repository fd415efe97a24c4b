package accounts_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/models"
)

const goodPassword = "correct horse battery staple"

var ctx = context.Background()

// TestSignUp: a new address gets the link and nothing but a pending row;
// the link's page takes the same password only; an address with a
// verified account gets the "you have one" e-mail, and its pending row
// never completes.
func TestSignUp(t *testing.T) {
	w := newWorld()
	addr, err := w.rules.StartSignUp(ctx, accounts.SignUpRequest{Email: " New@Example.com ", Password: goodPassword, ClientIP: "192.0.2.1"})
	require.NoError(t, err)
	require.Equal(t, "new@example.com", addr)
	require.Empty(t, w.st.users, "nothing about an account before the address is proved")
	require.Len(t, w.st.signUps, 1)
	token := w.mail.token(t)
	require.Contains(t, w.st.signUps, "h(password-signup:"+token+"|s1)", "stored under the flow's purpose and the secret")

	_, err = w.rules.CompleteSignUp(ctx, token, "another horse battery staple", "192.0.2.1")
	require.ErrorIs(t, err, accounts.ErrWrongPassword)
	_, err = w.rules.CompleteSignUp(ctx, "forged", goodPassword, "192.0.2.1")
	require.ErrorIs(t, err, accounts.ErrDeadLink)
	u, err := w.rules.CompleteSignUp(ctx, token, goodPassword, "192.0.2.1")
	require.NoError(t, err)
	require.NotNil(t, u.EmailVerified)
	_, err = w.rules.CompleteSignUp(ctx, token, goodPassword, "192.0.2.1")
	require.ErrorIs(t, err, accounts.ErrDeadLink, "a link works once")

	// The address has a verified account now: the other e-mail, same work.
	_, err = w.rules.StartSignUp(ctx, accounts.SignUpRequest{Email: addr, Password: goodPassword})
	require.NoError(t, err)
	require.Equal(t, "existing new@example.com", w.mail.sent[len(w.mail.sent)-1])
	require.Len(t, w.st.signUps, 1, "the inert pending row is stored all the same")
}

func TestSignUpRefusals(t *testing.T) {
	w := newWorld()
	_, err := w.rules.StartSignUp(ctx, accounts.SignUpRequest{Email: "not an address", Password: goodPassword})
	require.ErrorIs(t, err, accounts.ErrBadAddress)
	_, err = w.rules.StartSignUp(ctx, accounts.SignUpRequest{Email: "a@example.com", Password: "short"})
	require.ErrorIs(t, err, accounts.ErrPolicy)
	w.rules.Hooks.SignIn = func(context.Context, signin.SignInInput) (bool, string) { return false, "" }
	_, err = w.rules.StartSignUp(ctx, accounts.SignUpRequest{Email: "a@example.com", Password: goodPassword})
	require.ErrorIs(t, err, accounts.ErrHookRefused)
	require.Empty(t, w.mail.sent)
	require.Empty(t, w.st.signUps)

	// Rules tightened while a link is pending (its 24 h): the right
	// password is refused, no user is made and the link stays unspent.
	w = newWorld()
	_, err = w.rules.StartSignUp(ctx, accounts.SignUpRequest{Email: "a@example.com", Password: goodPassword})
	require.NoError(t, err)
	token := w.mail.token(t)
	w.rules.Hooks.SignIn = func(context.Context, signin.SignInInput) (bool, string) { return false, "" }
	_, err = w.rules.CompleteSignUp(ctx, token, goodPassword, "192.0.2.1")
	require.ErrorIs(t, err, accounts.ErrHookRefused)
	require.Empty(t, w.st.users, "an account the rules refuse now")
	require.Len(t, w.st.signUps, 1, "nothing spent")
	w.rules.Hooks.SignIn = func(context.Context, signin.SignInInput) (bool, string) { return true, "" }
	_, err = w.rules.CompleteSignUp(ctx, token, goodPassword, "192.0.2.1")
	require.NoError(t, err)

	// A failed delivery leaves no pending row.
	w = newWorld()
	w.mail.err = errBoom
	_, err = w.rules.StartSignUp(ctx, accounts.SignUpRequest{Email: "a@example.com", Password: goodPassword})
	require.ErrorIs(t, err, errBoom)
	require.Empty(t, w.st.signUps)
}

// TestReset: a known address gets a link, an unknown one the "no account"
// e-mail (and an inert row, never sent); completing sets the password, verifies, ends the sessions; the
// link works once; a link from before a secret rotation still works.
func TestReset(t *testing.T) {
	w := newWorld()
	u := w.st.addUser("a@example.com", true)
	_, err := w.rules.StartReset(ctx, "nobody@example.com", "192.0.2.1")
	require.NoError(t, err)
	require.Equal(t, "unknown nobody@example.com", w.mail.sent[0])
	require.Len(t, w.st.resets, 1, "an inert row, the same work as a known address's")
	for _, userID := range w.st.resets {
		require.Empty(t, userID, "for no user")
	}

	_, err = w.rules.StartReset(ctx, "A@example.com", "192.0.2.1")
	require.NoError(t, err)
	token := w.mail.token(t)

	// Rotation: the current secret is new, the link's hash was made under s1.
	old := w.rules.Hashes
	w.rules.Hashes = func(v string) []string { return append([]string{"h(" + v + "|s2)"}, old(v)...) }
	p, err := w.rules.OpenReset(ctx, token)
	require.NoError(t, err, "a link hashed under an older secret is found")
	require.Equal(t, u.ID, p.User.ID)

	require.ErrorIs(t, completeReset(ctx, w, accounts.ResetRequest{Token: token, Password: "short"}), accounts.ErrPolicy)
	require.NoError(t, completeReset(ctx, w, accounts.ResetRequest{Token: token, Password: goodPassword}))
	require.NotEmpty(t, w.st.passwords[u.ID])
	require.Equal(t, []any{now}, []any{w.ended[0]}, "the sessions ended are waited out")
	require.ErrorIs(t, completeReset(ctx, w, accounts.ResetRequest{Token: token, Password: goodPassword}), accounts.ErrDeadLink)
}

// completeReset is CompleteReset's error (the device cookie is empty: the
// tests' throttle has no device cookies; the app tests check it).
func completeReset(ctx context.Context, w *world, in accounts.ResetRequest) error {
	_, err := w.rules.CompleteReset(ctx, in)
	return err
}

// TestResetOwnersProofWins: an unverified holder with a linked account is
// mailed the link too (only the inbox can open it); completing it gives
// the owner a new verified user with the password, and the claimant keeps
// nothing of the address.
func TestResetOwnersProofWins(t *testing.T) {
	w := newWorld()
	claimant := w.st.addUser("victim@example.com", false)
	w.st.accounts[claimant.ID] = []models.Account{{ID: "a1", UserID: claimant.ID, Provider: "gh"}}
	_, err := w.rules.StartReset(ctx, "victim@example.com", "192.0.2.1")
	require.NoError(t, err)
	require.NoError(t, completeReset(ctx, w, accounts.ResetRequest{Token: w.mail.token(t), Password: goodPassword}))
	require.Nil(t, claimant.Email, "the claimant lost the address")
	require.Empty(t, w.st.passwords[claimant.ID], "and got no password")
	owner, err := w.st.UserByEmail(ctx, "victim@example.com")
	require.NoError(t, err)
	require.NotEqual(t, claimant.ID, owner.ID)
	require.NotNil(t, owner.EmailVerified)
	require.NotEmpty(t, w.st.passwords[owner.ID])
}

// TestResetRemoveLinked: the reset may take the linked methods with it;
// the user has a password now, so every one may go.
func TestResetRemoveLinked(t *testing.T) {
	w := newWorld()
	u := w.st.addUser("a@example.com", true)
	w.st.accounts[u.ID] = []models.Account{{ID: "a1", UserID: u.ID, Provider: "gh"}}
	_, err := w.rules.StartReset(ctx, "a@example.com", "")
	require.NoError(t, err)
	p, err := w.rules.OpenReset(ctx, w.mail.token(t))
	require.NoError(t, err)
	require.True(t, p.HasLinked)
	require.NoError(t, completeReset(ctx, w, accounts.ResetRequest{Token: w.mail.token(t), Password: goodPassword, RemoveLinked: true}))
	require.Equal(t, []string{u.ID + " other:true"}, w.core.unlinked)
}

// TestResetFinishesWhenTheClientLeaves: a client that hangs up once the
// reset's transaction has committed (the password changed, the sessions
// ended) does not stop the rest: the linked methods the user asked to
// remove go all the same.
func TestResetFinishesWhenTheClientLeaves(t *testing.T) {
	w := newWorld()
	u := w.st.addUser("a@example.com", true)
	w.st.accounts[u.ID] = []models.Account{{ID: "a1", UserID: u.ID, Provider: "gh"}}
	_, err := w.rules.StartReset(ctx, "a@example.com", "")
	require.NoError(t, err)
	gone, cancel := context.WithCancel(ctx)
	defer cancel()
	w.st.committed = cancel
	require.NoError(t, completeReset(gone, w, accounts.ResetRequest{Token: w.mail.token(t), Password: goodPassword, RemoveLinked: true}))
	require.Equal(t, []string{u.ID + " other:true"}, w.core.unlinked)
	require.Empty(t, w.st.accounts[u.ID])
}

// TestChangePassword: wrong, throttled, right; a user without a password
// is sent to add one by e-mail.
func TestChangePassword(t *testing.T) {
	w := newWorld()
	u := w.st.addUser("a@example.com", true)
	hash, err := w.rules.Hasher.Hash(goodPassword)
	require.NoError(t, err)
	w.st.passwords[u.ID] = hash
	next := "a different horse battery staple"
	change := func(u *models.User, in accounts.PasswordChange) error {
		_, err := w.rules.ChangePassword(ctx, u, in)
		return err
	}

	require.ErrorIs(t, change(u, accounts.PasswordChange{Current: "wrong one", Password: next}), accounts.ErrWrongPassword)
	require.ErrorIs(t, change(u, accounts.PasswordChange{Current: "", Password: next}), accounts.ErrWrongPassword)
	w.thr.down = true
	err = change(u, accounts.PasswordChange{Current: goodPassword, Password: next})
	require.Error(t, err, "a throttle that cannot be read refuses")
	require.NotErrorIs(t, err, accounts.ErrThrottled, "as an outage (the page's try again), not as too many attempts")
	require.NotErrorIs(t, err, accounts.ErrWrongPassword)
	w.thr.down = false
	require.Equal(t, hash, w.st.passwords[u.ID], "nothing changed")
	require.ErrorIs(t, change(u, accounts.PasswordChange{Current: goodPassword, Password: "short"}), accounts.ErrPolicy)
	require.NoError(t, change(u, accounts.PasswordChange{Current: goodPassword, Password: next}))
	require.NotEqual(t, hash, w.st.passwords[u.ID])
	require.Len(t, w.ended, 1)

	none := w.st.addUser("b@example.com", true)
	require.ErrorIs(t, change(none, accounts.PasswordChange{Current: goodPassword, Password: next}), accounts.ErrNoPassword)
}

// TestAddPasswordByEmail: a verified user gets a reset link; a holder of
// an unverified address with another way to sign in (UnprovedClaim) and a
// user without an address are refused, and nothing is mailed.
func TestAddPasswordByEmail(t *testing.T) {
	w := newWorld()
	u := w.st.addUser("a@example.com", true)
	require.NoError(t, w.rules.AddPasswordByEmail(ctx, u, "192.0.2.1"))
	require.Len(t, w.st.resets, 1)
	require.Equal(t, u.ID, w.st.resets["h(password-reset:"+w.mail.token(t)+"|s1)"])

	claimant := w.st.addUser("victim@example.com", false)
	w.st.accounts[claimant.ID] = []models.Account{{ID: "a1", UserID: claimant.ID, Provider: "gh"}}
	require.ErrorIs(t, w.rules.AddPasswordByEmail(ctx, claimant, ""), accounts.ErrNoConfirmedEmail)
	require.ErrorIs(t, w.rules.AddPasswordByEmail(ctx, w.st.addUser("", false), ""), accounts.ErrNoConfirmedEmail)
	require.Len(t, w.mail.sent, 1)

	// An unverified user with no other way to sign in is the owner's to claim.
	bare := w.st.addUser("bare@example.com", false)
	require.NoError(t, w.rules.AddPasswordByEmail(ctx, bare, ""))
}

// TestPasskeysOfAnotherUser: renaming or removing someone else's passkey
// is refused as an unknown one, and changes nothing.
func TestPasskeysOfAnotherUser(t *testing.T) {
	w := newWorld()
	w.rules.ReauthWindow = 10 * time.Minute
	u, v := w.st.addUser("u@example.com", true), w.st.addUser("v@example.com", true)
	w.st.passkeys["k1"] = models.Authenticator{ID: "k1", UserID: v.ID, Name: "V's key"}
	require.ErrorIs(t, w.rules.RenamePasskey(ctx, u.ID, "k1", "mine now"), accounts.ErrPasskeyNotFound)
	require.ErrorIs(t, w.rules.RemovePasskey(ctx, accounts.SignedIn{UserID: u.ID, Since: now}, "k1"), accounts.ErrPasskeyNotFound)
	require.Equal(t, "V's key", w.st.passkeys["k1"].Name)

	require.NoError(t, w.rules.RenamePasskey(ctx, v.ID, "k1", "  my   key "))
	require.Equal(t, "my key", w.st.passkeys["k1"].Name)
	list, err := w.rules.ListPasskeys(ctx, u.ID)
	require.NoError(t, err)
	require.Empty(t, list)
	require.NoError(t, w.rules.RemovePasskey(ctx, accounts.SignedIn{UserID: v.ID, Since: now}, "k1"))
	require.Empty(t, w.st.passkeys)
}

// everywhere is a fake accounts.Browser.
type everywhere struct {
	user     string
	endedOne bool
}

func (b *everywhere) SignedInUser(context.Context) (string, error) { return b.user, nil }
func (b *everywhere) EndSession(context.Context) error             { b.endedOne = true; return nil }

// TestSignOutEverywhere: in both strategies the user's sessions are
// revoked up to now (the database sessions' rows go with it) and this
// cookie cleared; removeLinked unlinks first, keeping the last way to
// sign in; a caller that already left does not stop it.
func TestSignOutEverywhere(t *testing.T) {
	t.Run("revoked", func(t *testing.T) {
		w := newWorld()
		u := w.st.addUser("a@example.com", true)
		b := &everywhere{user: u.ID}
		require.NoError(t, w.rules.SignOutEverywhere(ctx, b, false, accounts.SignedIn{}))
		require.Equal(t, now, w.st.revoked[u.ID])
		require.True(t, b.endedOne)
		require.Equal(t, []any{now}, []any{w.ended[0]})
		require.Empty(t, w.core.unlinked)
	})
	t.Run("the caller gone", func(t *testing.T) {
		w := newWorld()
		u := w.st.addUser("a@example.com", true)
		gone, cancel := context.WithCancel(ctx)
		cancel()
		b := &everywhere{user: u.ID}
		require.NoError(t, w.rules.SignOutEverywhere(gone, b, false, accounts.SignedIn{}))
		require.Equal(t, now, w.st.revoked[u.ID])
		require.True(t, b.endedOne)
	})
	t.Run("nobody signed in: only the cookie", func(t *testing.T) {
		w := newWorld()
		b := &everywhere{}
		require.NoError(t, w.rules.SignOutEverywhere(ctx, b, true, accounts.SignedIn{}))
		require.True(t, b.endedOne)
		require.Empty(t, w.st.revoked)
		require.Empty(t, w.core.unlinked)
	})
	t.Run("removeLinked, no other way: the oldest stays", func(t *testing.T) {
		w := newWorld()
		w.rules.ReauthWindow = 10 * time.Minute
		w.rules.Offered = accounts.Offered{} // no e-mail, password or passkey sign-in
		u := w.st.addUser("a@example.com", true)
		w.st.accounts[u.ID] = []models.Account{{ID: "a1", UserID: u.ID}}
		require.NoError(t, w.rules.SignOutEverywhere(ctx, &everywhere{user: u.ID}, true, accounts.SignedIn{UserID: u.ID, Since: now}))
		require.Equal(t, []string{u.ID + " other:false"}, w.core.unlinked)
	})
	t.Run("removeLinked, e-mail sign-in to a verified address", func(t *testing.T) {
		w := newWorld()
		w.rules.ReauthWindow = 10 * time.Minute
		u := w.st.addUser("a@example.com", true)
		require.NoError(t, w.rules.SignOutEverywhere(ctx, &everywhere{user: u.ID}, true, accounts.SignedIn{UserID: u.ID, Since: now}))
		require.Equal(t, []string{u.ID + " other:true"}, w.core.unlinked)
	})
	// Removing the linked methods is unlinking them all: it needs what
	// unlinking one does (Privileged). A session too old, or one without
	// the second factor once it is on, is refused before anything
	// happens: no link removed, nobody signed out, the cookie kept.
	t.Run("removeLinked is privileged", func(t *testing.T) {
		w := newWorld()
		w.rules.ReauthWindow = 10 * time.Minute
		u := w.st.addUser("a@example.com", true)
		b := &everywhere{user: u.ID}
		old := accounts.SignedIn{UserID: u.ID, Since: now.Add(-11 * time.Minute), Methods: []string{"pwd", "otp", "mfa"}}
		err := w.rules.SignOutEverywhere(ctx, b, true, old)
		require.ErrorIs(t, err, accounts.ErrReauth)
		require.NotErrorIs(t, err, accounts.ErrStepUp)
		w.rules.SecondFactor = secondFactor{need: true}
		require.ErrorIs(t, w.rules.SignOutEverywhere(ctx, b, true, accounts.SignedIn{UserID: u.ID, Since: now, Methods: []string{"pwd"}}), accounts.ErrStepUp)
		require.Empty(t, w.core.unlinked, "no link removed")
		require.Empty(t, w.st.revoked, "nobody signed out")
		require.False(t, b.endedOne, "the cookie kept")
		require.NoError(t, w.rules.SignOutEverywhere(ctx, b, false, old), "without removeLinked an old session signs out everywhere")
		require.Empty(t, w.core.unlinked)
		require.True(t, b.endedOne)
	})
}

// TestTellMethodAdded: only a verified address is told.
func TestTellMethodAdded(t *testing.T) {
	w := newWorld()
	w.rules.TellMethodAdded(ctx, w.st.addUser("v@example.com", true), "gh", "GitHub")
	w.rules.TellMethodAdded(ctx, w.st.addUser("u@example.com", false), "gh", "GitHub")
	require.Equal(t, []string{"added v@example.com GitHub"}, w.mail.sent)
}

// secondFactor is a fake accounts.SecondFactor: need for every session
// without mfa, or err.
type secondFactor struct {
	need bool
	err  error
}

func (f secondFactor) NeedsSecondFactor(_ context.Context, _ string, methods []string) (bool, error) {
	return f.need && !slices.Contains(methods, "mfa"), f.err
}

func (f secondFactor) MustEnrol(context.Context, string, *string) (bool, error) { return false, f.err }

// TestRemovingAPasskeyIsPrivileged: removing a passkey needs a recent
// sign-in and, once two-factor is in force, a session that used it, as
// adding one does; a refusal (ErrReauth) or a failure to read two-factor
// removes nothing.
func TestRemovingAPasskeyIsPrivileged(t *testing.T) {
	w := newWorld()
	w.rules.ReauthWindow = 10 * time.Minute
	u := w.st.addUser("u@example.com", true)
	w.st.passkeys["k1"] = models.Authenticator{ID: "k1", UserID: u.ID}
	w.st.passkeys["k2"] = models.Authenticator{ID: "k2", UserID: u.ID}
	old := accounts.SignedIn{UserID: u.ID, Since: now.Add(-11 * time.Minute), Methods: []string{"pwd", "otp", "mfa"}}
	err := w.rules.RemovePasskey(ctx, old, "k1")
	require.ErrorIs(t, err, accounts.ErrReauth)
	require.NotErrorIs(t, err, accounts.ErrStepUp, "too long ago: a new sign-in, not a code, mends it")

	w.rules.SecondFactor = secondFactor{need: true}
	pwd := accounts.SignedIn{UserID: u.ID, Since: now, Methods: []string{"pwd"}}
	require.ErrorIs(t, w.rules.RemovePasskey(ctx, pwd, "k1"), accounts.ErrStepUp, "recent, without the second factor: the step-up form")
	w.rules.SecondFactor = secondFactor{err: errors.New("database down")}
	err = w.rules.RemovePasskey(ctx, pwd, "k1")
	require.Error(t, err)
	require.NotErrorIs(t, err, accounts.ErrReauth, "the server's failure, not the user's")
	require.Len(t, w.st.passkeys, 2, "nothing removed")
	require.Empty(t, w.mail.sent, "nothing told")

	w.rules.SecondFactor = secondFactor{need: true}
	require.NoError(t, w.rules.RemovePasskey(ctx, accounts.SignedIn{UserID: u.ID, Since: now.Add(-9 * time.Minute), Methods: []string{"pwd", "otp", "mfa"}}, "k1"))
	w.rules.SecondFactor = nil // two-factor off: a recent sign-in is enough
	require.NoError(t, w.rules.RemovePasskey(ctx, pwd, "k2"))
	require.Empty(t, w.st.passkeys)
}
