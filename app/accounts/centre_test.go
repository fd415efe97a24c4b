package accounts_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/models"
)

// centre is the account page's storage in memory.
type centre struct {
	unlinked []string
	changes  map[string][2]string // token hash → user id, new address
	users    *store
}

func (c *centre) UnlinkAccount(_ context.Context, userID, accountID string, keep func(models.SignInWays) error) (bool, error) {
	list := c.users.accounts[userID]
	for i, a := range list {
		if a.ID == accountID {
			c.users.accounts[userID] = append(list[:i:i], list[i+1:]...)
			if err := keep(c.users.waysOf(userID)); err != nil {
				c.users.accounts[userID] = list
				return false, err
			}
			c.unlinked = append(c.unlinked, accountID)
			return true, nil
		}
	}
	return false, nil
}

func (c *centre) CreateEmailChange(_ context.Context, userID, addr, hash string, _ time.Time) error {
	c.changes[hash] = [2]string{userID, addr}
	return nil
}

func (c *centre) DeleteEmailChange(_ context.Context, _, hash string) error {
	delete(c.changes, hash)
	return nil
}

func (c *centre) DeleteEmailChanges(_ context.Context, userID string) (int64, error) {
	var n int64
	for hash, ch := range c.changes {
		if ch[0] == userID {
			delete(c.changes, hash)
			n++
		}
	}
	return n, nil
}

func (c *centre) EmailChangeByHash(_ context.Context, hash string, _ time.Time) (string, string, error) {
	ch, ok := c.changes[hash]
	if !ok {
		return "", "", models.ErrNotFound
	}
	return ch[0], ch[1], nil
}

func (c *centre) ApplyEmailChange(_ context.Context, hash string, _ time.Time) (string, string, string, error) {
	ch, ok := c.changes[hash]
	if !ok {
		return "", "", "", models.ErrNotFound
	}
	for _, u := range c.users.users {
		if u.Email != nil && *u.Email == ch[1] {
			return "", "", "", models.ErrConflict
		}
	}
	delete(c.changes, hash)
	u := c.users.users[ch[0]]
	old := *u.Email
	u.Email = &ch[1]
	return ch[0], old, ch[1], nil
}

func newCentreWorld() (*world, *centre) {
	w := newWorld()
	c := &centre{changes: map[string][2]string{}, users: w.st}
	w.rules.Centre, w.rules.ReauthWindow, w.rules.SelfDelete = c, 10*time.Minute, true
	return w, c
}

// sessionsOf are a password session of u that signed in now (fresh) and
// one that signed in 11 minutes ago (old).
func sessionsOf(w *world, u *models.User) (fresh, old accounts.SignedIn) {
	now := w.rules.Now()
	return accounts.SignedIn{UserID: u.ID, Since: now, Methods: []string{"pwd"}},
		accounts.SignedIn{UserID: u.ID, Since: now.Add(-11 * time.Minute), Methods: []string{"pwd"}}
}

func TestUnlinkMethodRules(t *testing.T) {
	w, c := newCentreWorld()
	w.rules.Offered = accounts.Offered{} // no password, passkey or e-mail sign-in: identities are the only way in
	u := w.st.addUser("ada@example.com", true)
	w.st.accounts[u.ID] = []models.Account{{ID: "a1", Provider: "github"}, {ID: "a2", Provider: "google"}}
	name := func(id string) string { return strings.ToUpper(id) }
	ctx := context.Background()
	fresh, old := sessionsOf(w, u)
	if err := w.rules.UnlinkMethod(ctx, old, u, "a2", name); !errors.Is(err, accounts.ErrReauth) {
		t.Fatalf("an old session: %v", err)
	}
	if err := w.rules.UnlinkMethod(ctx, fresh, u, "someone-elses", name); !errors.Is(err, accounts.ErrNoSuchMethod) {
		t.Fatalf("another id: %v", err)
	}
	if err := w.rules.UnlinkMethod(ctx, fresh, u, "a2", name); err != nil {
		t.Fatal(err)
	}
	if err := w.rules.UnlinkMethod(ctx, fresh, u, "a1", name); !errors.Is(err, accounts.ErrLastMethod) {
		t.Fatalf("the last way in: %v", err)
	}
	if len(c.unlinked) != 1 || !strings.Contains(strings.Join(w.mail.sent, "\n"), "removed ada@example.com GOOGLE") {
		t.Fatalf("one unlink, told by e-mail: %v %v", c.unlinked, w.mail.sent)
	}
}

func TestEmailChangeRules(t *testing.T) {
	w, c := newCentreWorld()
	u := w.st.addUser("ada@example.com", true)
	w.st.addUser("bob@example.com", true)
	ctx := context.Background()
	fresh, old := sessionsOf(w, u)
	sent := len(w.mail.sent)
	if err := w.rules.StartEmailChange(ctx, old, u, "ada.new@example.com", "192.0.2.1"); !errors.Is(err, accounts.ErrReauth) {
		t.Fatalf("a session that did not sign in recently: %v", err)
	}
	if len(w.mail.sent) != sent || len(c.changes) != 0 {
		t.Fatalf("a refused change sent or stored something: %v %v", w.mail.sent, c.changes)
	}
	if err := w.rules.StartEmailChange(ctx, fresh, u, "ADA@example.com", "192.0.2.1"); !errors.Is(err, accounts.ErrNothingToChange) {
		t.Fatalf("the same address: %v", err)
	}
	if err := w.rules.StartEmailChange(ctx, fresh, u, "bob@example.com", "192.0.2.1"); err != nil {
		t.Fatalf("a taken address answers as any: %v", err)
	}
	if len(c.changes) != 1 || !strings.HasPrefix(w.mail.sent[len(w.mail.sent)-1], "email-in-use bob@example.com") {
		t.Fatalf("a taken address gets a notice, no link, and the same stored row as a free one (the time tells nothing): %v %v", c.changes, w.mail.sent)
	}
	for hash := range c.changes {
		delete(c.changes, hash) // inert: its token was sent nowhere
	}
	if err := w.rules.StartEmailChange(ctx, fresh, u, "ada.new@example.com", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	last := strings.Fields(w.mail.sent[len(w.mail.sent)-1])
	token := last[2]
	if addr, err := w.rules.PendingEmailChange(ctx, token); err != nil || addr != "ada.new@example.com" {
		t.Fatalf("pending: %q %v", addr, err)
	}
	b := &addressBrowser{}
	if _, err := w.rules.ApplyEmailChange(ctx, b, token); err != nil {
		t.Fatal(err)
	}
	if want := []string{u.ID + " ada.new@example.com"}; !slices.Equal(b.changed, want) {
		t.Fatalf("the sessions followed %v, want %v", b.changed, want)
	}
	if _, err := w.rules.ApplyEmailChange(ctx, b, token); !errors.Is(err, accounts.ErrDeadLink) {
		t.Fatalf("a spent link: %v", err)
	}
	if len(b.changed) != 1 {
		t.Fatalf("a spent link changed sessions: %v", b.changed)
	}
	if !strings.HasPrefix(w.mail.sent[len(w.mail.sent)-1], "email-changed ada@example.com ada.new@example.com") {
		t.Fatalf("the old address is told: %v", w.mail.sent)
	}
}

// TestNoticesGoOutWhenTheCallerLeft: the notice of a change that has
// committed is sent whether or not the caller is still there (a cancelled
// context, as a client that hung up leaves): an e-mail change confirmed
// with a stolen session's link must reach the old address however soon
// the confirming client leaves, and so must the two-factor and linking
// notices.
func TestNoticesGoOutWhenTheCallerLeft(t *testing.T) {
	w, _ := newCentreWorld()
	u := w.st.addUser("ada@example.com", true)
	fresh, _ := sessionsOf(w, u)
	if err := w.rules.StartEmailChange(context.Background(), fresh, u, "ada.new@example.com", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	token := strings.Fields(w.mail.sent[len(w.mail.sent)-1])[2]
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	b := &addressBrowser{}
	if _, err := w.rules.ApplyEmailChange(gone, b, token); err != nil {
		t.Fatal(err)
	}
	if len(b.changed) != 1 {
		t.Fatalf("the sessions did not follow the change: %v", b.changed)
	}
	w.rules.TellTwoFactor(gone, u, accounts.TwoFactorTurnedOn, 0)
	w.rules.TellMethodAdded(gone, u, "gh", "GitHub")
	want := []string{"email-changed ada@example.com ada.new@example.com", "two-factor", "added"}
	got := w.mail.sent[len(w.mail.sent)-3:]
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("notices sent: %v", w.mail.sent)
		}
	}
}

// addressBrowser records the address changes its sessions followed; like
// the real strategies' writes, it fails in a cancelled context.
type addressBrowser struct{ changed []string }

func (b *addressBrowser) AddressChanged(ctx context.Context, userID, addr string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.changed = append(b.changed, userID+" "+addr)
	return 1, nil
}

func TestDeleteAccountRules(t *testing.T) {
	w, _ := newCentreWorld()
	u := w.st.addUser("ada@example.com", true)
	ctx := context.Background()
	b := &everywhere{}
	fresh, old := sessionsOf(w, u)
	if err := w.rules.DeleteAccount(ctx, b, old, u, "ada@example.com"); !errors.Is(err, accounts.ErrReauth) {
		t.Fatalf("an old session: %v", err)
	}
	if err := w.rules.DeleteAccount(ctx, b, fresh, u, "bob@example.com"); !errors.Is(err, accounts.ErrDeleteConfirm) {
		t.Fatalf("the wrong word: %v", err)
	}
	w.rules.SelfDelete = false
	if err := w.rules.DeleteAccount(ctx, b, fresh, u, "ada@example.com"); !errors.Is(err, accounts.ErrSelfDeleteOff) {
		t.Fatalf("self-deletion off: %v", err)
	}
	if _, ok := w.st.users[u.ID]; !ok {
		t.Fatal("every refusal changes nothing")
	}
	w.rules.SelfDelete = true
	if err := w.rules.DeleteAccount(ctx, b, fresh, u, " ADA@example.com "); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.st.users[u.ID]; ok || len(w.ended) == 0 || !b.endedOne {
		t.Fatalf("deleted, sessions revoked, the browser signed out: %v %v", w.ended, b.endedOne)
	}
	if accounts.DeleteConfirmWord(&models.User{}) != "DELETE" {
		t.Fatal("a user without an address types DELETE")
	}
}

// TestAccountChangesArePrivileged: with two-factor in force, a recent
// session that did not use it may not unlink, start an e-mail change or
// delete the account (ErrStepUp, nothing changed or sent), as it may not
// remove a passkey: it could hand the account over.
func TestAccountChangesArePrivileged(t *testing.T) {
	w, c := newCentreWorld()
	u := w.st.addUser("ada@example.com", true)
	w.st.accounts[u.ID] = []models.Account{{ID: "a1", Provider: "github"}, {ID: "a2", Provider: "google"}}
	w.rules.SecondFactor = secondFactor{need: true}
	ctx := context.Background()
	fresh, _ := sessionsOf(w, u)
	sent := len(w.mail.sent)
	for what, err := range map[string]error{
		"unlink":       w.rules.UnlinkMethod(ctx, fresh, u, "a2", strings.ToUpper),
		"e-mail":       w.rules.StartEmailChange(ctx, fresh, u, "mallory@example.com", "192.0.2.1"),
		"delete":       w.rules.DeleteAccount(ctx, &everywhere{}, fresh, u, "ada@example.com"),
		"link (check)": w.rules.Privileged(ctx, fresh),
	} {
		if !errors.Is(err, accounts.ErrStepUp) {
			t.Errorf("%s: %v, want ErrStepUp", what, err)
		}
	}
	if _, ok := w.st.users[u.ID]; !ok || len(c.unlinked) != 0 || len(c.changes) != 0 || len(w.mail.sent) != sent {
		t.Fatalf("a refusal changed or sent something: %v %v %v", c.unlinked, c.changes, w.mail.sent[sent:])
	}
	fresh.Methods = []string{"pwd", "otp", "mfa"}
	if err := w.rules.UnlinkMethod(ctx, fresh, u, "a2", strings.ToUpper); err != nil {
		t.Fatalf("with the second factor: %v", err)
	}
}

// TestTakingTheAccountBackEndsEmailChanges: signing out everywhere, a
// password reset and a password change end the user's pending e-mail
// change links with their sessions. A link started from a session these
// end (a stolen one) goes to an address its holder chose: left alive, it
// moved the account's address there after the owner had locked the
// holder out, and a reset there took the account. Another user's pending
// change stays.
func TestTakingTheAccountBackEndsEmailChanges(t *testing.T) {
	for name, takeBack := range map[string]func(t *testing.T, w *world, u *models.User) error{
		"sign out everywhere": func(_ *testing.T, w *world, u *models.User) error {
			return w.rules.SignOutEverywhere(ctx, &everywhere{user: u.ID}, false, accounts.SignedIn{})
		},
		"password change": func(t *testing.T, w *world, u *models.User) error {
			hash, err := w.rules.Hasher.Hash(goodPassword)
			if err != nil {
				t.Fatal(err)
			}
			w.st.passwords[u.ID] = hash
			_, err = w.rules.ChangePassword(ctx, u, accounts.PasswordChange{Current: goodPassword, Password: "a different horse battery staple"})
			return err
		},
		"password reset": func(t *testing.T, w *world, u *models.User) error {
			if _, err := w.rules.StartReset(ctx, *u.Email, "192.0.2.1"); err != nil {
				t.Fatal(err)
			}
			return completeReset(ctx, w, accounts.ResetRequest{Token: w.mail.token(t), Password: goodPassword})
		},
	} {
		t.Run(name, func(t *testing.T) {
			w, _ := newCentreWorld()
			u, bob := w.st.addUser("ada@example.com", true), w.st.addUser("bob@example.com", true)
			var tokens []string
			for _, who := range []*models.User{u, bob} {
				fresh, _ := sessionsOf(w, who)
				if err := w.rules.StartEmailChange(ctx, fresh, who, "new."+*who.Email, "192.0.2.1"); err != nil {
					t.Fatal(err)
				}
				tokens = append(tokens, w.mail.token(t))
			}
			if err := takeBack(t, w, u); err != nil {
				t.Fatal(err)
			}
			if addr, err := w.rules.PendingEmailChange(ctx, tokens[0]); !errors.Is(err, accounts.ErrDeadLink) {
				t.Fatalf("the user's pending change lives on: %q %v", addr, err)
			}
			if _, err := w.rules.ApplyEmailChange(ctx, &addressBrowser{}, tokens[0]); !errors.Is(err, accounts.ErrDeadLink) {
				t.Fatalf("the user's pending change applied: %v", err)
			}
			if *w.st.users[u.ID].Email != "ada@example.com" {
				t.Fatalf("the address moved to %s", *w.st.users[u.ID].Email)
			}
			if _, err := w.rules.PendingEmailChange(ctx, tokens[1]); err != nil {
				t.Fatalf("another user's pending change ended: %v", err)
			}
		})
	}
}

// TestNewEmailChangeReplacesTheLast: a new change link ends the user's
// earlier ones, so an address typed wrong and corrected (or one the user
// changed their mind about) cannot take the account when its holder opens
// the first link. A refused request ends nothing.
func TestNewEmailChangeReplacesTheLast(t *testing.T) {
	w, _ := newCentreWorld()
	u := w.st.addUser("ada@example.com", true)
	fresh, old := sessionsOf(w, u)
	if err := w.rules.StartEmailChange(ctx, fresh, u, "ada@exmaple.com", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	typo := w.mail.token(t)
	for _, refused := range []error{
		w.rules.StartEmailChange(ctx, old, u, "ada.new@example.com", "192.0.2.1"),
		w.rules.StartEmailChange(ctx, fresh, u, "not an address", "192.0.2.1"),
	} {
		if refused == nil {
			t.Fatal("not refused")
		}
	}
	if _, err := w.rules.PendingEmailChange(ctx, typo); err != nil {
		t.Fatalf("a refused request ended the pending change: %v", err)
	}
	if err := w.rules.StartEmailChange(ctx, fresh, u, "ada.new@example.com", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	meant := w.mail.token(t)
	if addr, err := w.rules.ApplyEmailChange(ctx, &addressBrowser{}, typo); !errors.Is(err, accounts.ErrDeadLink) {
		t.Fatalf("the earlier link still works: %q %v", addr, err)
	}
	if addr, err := w.rules.ApplyEmailChange(ctx, &addressBrowser{}, meant); err != nil || addr != "ada.new@example.com" {
		t.Fatalf("the latest link: %q %v", addr, err)
	}
}
