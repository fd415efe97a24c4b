package admin

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/adminstore"
)

// The admin commands' bodies (see adminCommands).

// userJSON is a user as `users list --json` prints it.
type userJSON struct {
	ID            string     `json:"id"`
	Email         *string    `json:"email"`
	Name          *string    `json:"name"`
	EmailVerified *time.Time `json:"emailVerified"`
	CreatedAt     time.Time  `json:"createdAt"`
	Providers     []string   `json:"providers"`
	Sessions      int64      `json:"sessions"` // live database sessions
}

// defaultPageLimit is the page of the list commands without --limit.
const defaultPageLimit = 100

// nextPage tells the operator how to ask for the page after this one: on
// standard output under the table, on standard error with --json (whose
// output stays one JSON array).
func (r *adminRun) nextPage(next string) {
	if next == "" {
		return
	}
	w := r.out
	if r.json {
		w = r.errw
	}
	fmt.Fprintf(w, "next page: --after %s\n", next)
}

func usersList(r *adminRun) error {
	users, next, err := adminstore.New(r.store).UserOverviews(r.ctx, r.now, r.page)
	if err != nil {
		return err
	}
	if r.json {
		out := make([]userJSON, len(users))
		for i, u := range users {
			out[i] = userJSON{ID: u.ID, Email: u.Email, Name: u.Name, EmailVerified: u.EmailVerified,
				CreatedAt: u.CreatedAt.UTC(), Providers: u.Providers, Sessions: u.Sessions}
		}
		if err := r.printJSON(out); err != nil {
			return err
		}
		r.nextPage(next)
		return nil
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tEMAIL\tNAME\tCREATED\tACCOUNTS\tSESSIONS")
	for _, u := range users {
		providers := strings.Join(u.Providers, ",")
		if providers == "" {
			providers = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\n", u.ID, orDash(u.Email), orDash(u.Name), stamp(u.CreatedAt), providers, u.Sessions)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(r.out, plural(int64(len(users)), "user"))
	r.nextPage(next)
	return nil
}

// userWithRows finds the user named by ref with its linked accounts and
// live database sessions.
func (r *adminRun) userWithRows(ref string) (*models.User, []models.Account, []adminstore.SessionListing, error) {
	u, err := r.findUser(ref)
	if err != nil {
		return nil, nil, nil, err
	}
	accounts, err := r.store.AccountsOf(r.ctx, u.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	sessions, _, err := adminstore.New(r.store).SessionListings(r.ctx, u.ID, r.now, adminstore.Page{})
	if err != nil {
		return nil, nil, nil, err
	}
	return u, accounts, sessions, nil
}

func usersShow(r *adminRun) error {
	u, accounts, sessions, err := r.userWithRows(r.args[0])
	if err != nil {
		return err
	}
	var pending int64
	if u.Email != nil {
		if pending, err = adminstore.New(r.store).PendingSignIns(r.ctx, *u.Email, r.now); err != nil {
			return err
		}
	}
	revoked, err := adminstore.New(r.store).RevokedAt(r.ctx, u.ID)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "id:\t%s\n", u.ID)
	verified := "not verified"
	if u.EmailVerified != nil {
		verified = "verified " + stamp(*u.EmailVerified)
	}
	fmt.Fprintf(w, "email:\t%s (%s)\n", orDash(u.Email), verified)
	fmt.Fprintf(w, "name:\t%s\n", orDash(u.Name))
	fmt.Fprintf(w, "image:\t%s\n", orDash(u.Image))
	fmt.Fprintf(w, "created:\t%s\n", stamp(u.CreatedAt))
	links := make([]string, len(accounts))
	for i, a := range accounts {
		links[i] = fmt.Sprintf("%s (account %s, linked %s)", a.Provider, a.ProviderAccountID, stamp(a.CreatedAt))
	}
	if len(links) == 0 {
		links = []string{"-"}
	}
	fmt.Fprintf(w, "accounts:\t%s\n", strings.Join(links, "; "))
	if err := r.printPassword(w, u.ID); err != nil {
		return err
	}
	fmt.Fprintf(w, "database sessions:\t%d\n", len(sessions))
	fmt.Fprintf(w, "pending sign-in links:\t%d\n", pending)
	if !revoked.IsZero() {
		fmt.Fprintf(w, "sessions revoked:\tthose signed in before %s\n", stamp(revoked))
	}
	return w.Flush()
}

func usersDelete(r *adminRun) error {
	u, accounts, sessions, err := r.userWithRows(r.args[0])
	if err != nil {
		return err
	}
	if err := r.confirm(fmt.Sprintf("Delete user %s with %s and %s, and end all its sessions?",
		label(u), plural(int64(len(accounts)), "account"), plural(int64(len(sessions)), "database session"))); err != nil {
		return err
	}
	d, err := r.store.DeleteUser(r.ctx, u.ID, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "deleted user %s: %s, %s, %s; %s; %s\n", label(u),
		plural(d.Accounts, "account"), plural(d.Sessions, "session"), plural(d.Tokens, "pending sign-in token"), r.dbNote(), r.jwtNote())
	return nil
}

func sessionsList(r *adminRun) error {
	userID := ""
	if r.user != "" {
		u, err := r.findUser(r.user)
		if err != nil {
			return err
		}
		userID = u.ID
	}
	sessions, next, err := adminstore.New(r.store).SessionListings(r.ctx, userID, r.now, r.page)
	if err != nil {
		return err
	}
	if r.cfg.Session.Strategy == config.StrategyJWT {
		fmt.Fprintln(r.errw, "note: session.strategy is jwt: those sessions live in cookies and are not listed (`sessions revoke` ends them all the same)")
	}
	if r.json {
		if sessions == nil {
			sessions = []adminstore.SessionListing{}
		}
		if err := r.printJSON(sessions); err != nil {
			return err
		}
		r.nextPage(next)
		return nil
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tUSER\tEMAIL\tSIGNED IN\tEXPIRES")
	for _, s := range sessions {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.UserID, orDash(s.Email), stamp(s.SignedIn), stamp(s.Expires))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(r.out, plural(int64(len(sessions)), "database session"))
	r.nextPage(next)
	return nil
}

// checkRevoke: exactly one of --user and --all.
func checkRevoke(r *adminRun) error {
	if (r.user == "") == !r.all {
		return errors.New("give either --user <email|id> or --all")
	}
	return nil
}

func sessionsRevoke(r *adminRun) error {
	if r.all {
		if err := r.confirm("End every session of every user?"); err != nil {
			return err
		}
		n, err := r.store.RevokeSessions(r.ctx, models.AllUsers, time.Now())
		if err != nil {
			return err
		}
		fmt.Fprintf(r.out, "revoked every session: deleted %s; %s; %s\n", plural(n, "database session"), r.dbNote(), r.jwtNote())
		return nil
	}
	u, err := r.findUser(r.user)
	if err != nil {
		return err
	}
	n, err := r.store.RevokeSessions(r.ctx, u.ID, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "revoked the sessions of user %s: deleted %s; %s; %s\n", label(u), plural(n, "database session"), r.dbNote(), r.jwtNote())
	return nil
}

// accountsUnlink removes the user's link to one provider, after a
// confirmation: the identity then signs in as a stranger would.
func accountsUnlink(r *adminRun) error {
	u, err := r.findUser(r.args[0])
	if err != nil {
		return err
	}
	accounts, err := r.store.AccountsOf(r.ctx, u.ID)
	if err != nil {
		return err
	}
	provider := r.args[1]
	noAccount := func(linked []string) error {
		if len(linked) == 0 {
			linked = []string{"none"}
		}
		return fmt.Errorf("user %s has no account at provider %q (linked: %s); nothing changed", label(u), provider, strings.Join(linked, ", "))
	}
	names := providers(accounts)
	if !slices.Contains(names, provider) { // refused before asking
		return noAccount(names)
	}
	if err := r.confirm(fmt.Sprintf("Unlink the %q account from user %s? Its sessions stay.", provider, label(u))); err != nil {
		return err
	}
	n, err := r.store.UnlinkAccount(r.ctx, u.ID, provider)
	if err != nil {
		return err
	}
	left, err := r.store.AccountsOf(r.ctx, u.ID)
	if err != nil {
		return err
	}
	if n == 0 { // unlinked by someone else meanwhile
		return noAccount(providers(left))
	}
	fmt.Fprintf(r.out, "unlinked %s at %q from user %s; %s left\n", plural(n, "account"), provider, label(u), plural(int64(len(left)), "account"))
	return nil
}

// providers names the accounts' providers, in their order.
func providers(accounts []models.Account) []string {
	names := make([]string, len(accounts))
	for i, a := range accounts {
		names[i] = a.Provider
	}
	return names
}

// accountsUnlinkAll removes every OAuth/OIDC identity linked to a user,
// as after a stolen session was used to link one: the operator decides,
// so unlike the self-service removal it may leave the user without a way
// to sign in (the summary says what is left).
func accountsUnlinkAll(r *adminRun) error {
	u, accounts, _, err := r.userWithRows(r.args[0])
	if err != nil {
		return err
	}
	if len(accounts) == 0 {
		return fmt.Errorf("user %s has no linked accounts; nothing changed", label(u))
	}
	names := providers(accounts)
	if err := r.confirm(fmt.Sprintf("Unlink %s (%s) from user %s?", plural(int64(len(accounts)), "account"), strings.Join(names, ", "), label(u))); err != nil {
		return err
	}
	n, _, err := r.store.UnlinkAccounts(r.ctx, u.ID, func(models.SignInWays) bool { return true }) // the operator's call: every one goes
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "unlinked %s (%s) from user %s; its sessions stay (`sessions revoke --user` ends them)\n", plural(n, "account"), strings.Join(names, ", "), label(u))
	return nil
}
