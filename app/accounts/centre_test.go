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

func TestUnlinkMethodRules(t *testing.T) {
	w, c := newCentreWorld()
	w.rules.Offered = accounts.Offered{} // no password, passkey or e-mail sign-in: identities are the only way in
	u := w.st.addUser("ada@example.com", true)
	w.st.accounts[u.ID] = []models.Account{{ID: "a1", Provider: "github"}, {ID: "a2", Provider: "google"}}
	name := func(id string) string { return strings.ToUpper(id) }
	ctx := context.Background()
	if err := w.rules.UnlinkMethod(ctx, u, "a2", false, name); !errors.Is(err, accounts.ErrReauth) {
		t.Fatalf("an old session: %v", err)
	}
	if err := w.rules.UnlinkMethod(ctx, u, "someone-elses", true, name); !errors.Is(err, accounts.ErrNoSuchMethod) {
		t.Fatalf("another id: %v", err)
	}
	if err := w.rules.UnlinkMethod(ctx, u, "a2", true, name); err != nil {
		t.Fatal(err)
	}
	if err := w.rules.UnlinkMethod(ctx, u, "a1", true, name); !errors.Is(err, accounts.ErrLastMethod) {
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
	sent := len(w.mail.sent)
	if err := w.rules.StartEmailChange(ctx, u, "ada.new@example.com", "192.0.2.1", false); !errors.Is(err, accounts.ErrReauth) {
		t.Fatalf("a session that did not sign in recently: %v", err)
	}
	if len(w.mail.sent) != sent || len(c.changes) != 0 {
		t.Fatalf("a refused change sent or stored something: %v %v", w.mail.sent, c.changes)
	}
	if err := w.rules.StartEmailChange(ctx, u, "ADA@example.com", "192.0.2.1", true); !errors.Is(err, accounts.ErrNothingToChange) {
		t.Fatalf("the same address: %v", err)
	}
	if err := w.rules.StartEmailChange(ctx, u, "bob@example.com", "192.0.2.1", true); err != nil {
		t.Fatalf("a taken address answers as any: %v", err)
	}
	if len(c.changes) != 1 || !strings.HasPrefix(w.mail.sent[len(w.mail.sent)-1], "email-in-use bob@example.com") {
		t.Fatalf("a taken address gets a notice, no link, and the same stored row as a free one (the time tells nothing): %v %v", c.changes, w.mail.sent)
	}
	for hash := range c.changes {
		delete(c.changes, hash) // inert: its token was sent nowhere
	}
	if err := w.rules.StartEmailChange(ctx, u, "ada.new@example.com", "192.0.2.1", true); err != nil {
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
	if err := w.rules.StartEmailChange(context.Background(), u, "ada.new@example.com", "192.0.2.1", true); err != nil {
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
	if err := w.rules.DeleteAccount(ctx, b, u, "ada@example.com", false); !errors.Is(err, accounts.ErrReauth) {
		t.Fatalf("an old session: %v", err)
	}
	if err := w.rules.DeleteAccount(ctx, b, u, "bob@example.com", true); !errors.Is(err, accounts.ErrDeleteConfirm) {
		t.Fatalf("the wrong word: %v", err)
	}
	w.rules.SelfDelete = false
	if err := w.rules.DeleteAccount(ctx, b, u, "ada@example.com", true); !errors.Is(err, accounts.ErrSelfDeleteOff) {
		t.Fatalf("self-deletion off: %v", err)
	}
	if _, ok := w.st.users[u.ID]; !ok {
		t.Fatal("every refusal changes nothing")
	}
	w.rules.SelfDelete = true
	if err := w.rules.DeleteAccount(ctx, b, u, " ADA@example.com ", true); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.st.users[u.ID]; ok || len(w.ended) == 0 || !b.endedOne {
		t.Fatalf("deleted, sessions revoked, the browser signed out: %v %v", w.ended, b.endedOne)
	}
	if accounts.DeleteConfirmWord(&models.User{}) != "DELETE" {
		t.Fatal("a user without an address types DELETE")
	}
}
