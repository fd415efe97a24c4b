package admin

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/twofactorstore"
)

// `latchkey users two-factor status|reset|forget-devices <email|id>`: an
// operator's view of a user's second factor, and the two ways out for a
// user who lost their phone and their recovery codes (reset) or a browser
// they had asked to be remembered (forget-devices). The store is read and
// written directly, as the other admin commands do; the TOTP secret is
// never opened, so no service secret is needed.

// twoFactorActions are the sub-commands, in the order usage lists them.
var twoFactorActions = []string{"status", "reset", "forget-devices"}

// badInput is an error of the command line found after the database was
// opened (an unknown user): exit 2, as the other command-line errors.
type badInput struct{ error }

// checkTwoFactor refuses an unknown sub-command before the database is
// opened.
func checkTwoFactor(r *adminRun) error {
	if !slices.Contains(twoFactorActions, r.args[0]) {
		return fmt.Errorf("unknown two-factor command %q (one of: %s)", r.args[0], strings.Join(twoFactorActions, ", "))
	}
	return nil
}

func usersTwoFactor(r *adminRun) error {
	u, err := r.findUser(r.args[1])
	if errors.Is(err, errNoUser) || (err != nil && strings.TrimSpace(r.args[1]) == "") {
		return badInput{err}
	}
	if err != nil {
		return err
	}
	switch r.args[0] {
	case "status":
		return r.twoFactorStatus(u)
	case "reset":
		return r.twoFactorReset(u)
	default:
		return r.twoFactorForgetDevices(u)
	}
}

// twoFactors is the two-factor storage (its own room of the store).
func (r *adminRun) twoFactors() *twofactorstore.Store { return twofactorstore.New(r.store) }

// twoFactorRow is the user's two-factor row; nil when there is none.
func (r *adminRun) twoFactorRow(u *models.User) (*twofactorstore.TwoFactor, error) {
	row, err := r.twoFactors().TwoFactorOf(r.ctx, u.ID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	return row, err
}

// twoFactorStatus prints one line: on (since, recovery codes left, a
// backoff in force) or off (an enrolment begun and not confirmed, if any).
func (r *adminRun) twoFactorStatus(u *models.User) error {
	row, err := r.twoFactorRow(u)
	if err != nil {
		return err
	}
	line := "user " + label(u) + ": two-factor "
	switch {
	case row == nil:
		line += "off"
	case row.ConfirmedAt == nil:
		line += "off (an enrolment begun " + stamp(row.CreatedAt) + ", not confirmed)"
	default:
		codes, err := r.twoFactors().UnusedRecoveryCodes(r.ctx, u.ID)
		if err != nil {
			return err
		}
		line += fmt.Sprintf("on since %s, %s left", stamp(*row.ConfirmedAt), plural(int64(len(codes)), "recovery code"))
		if row.BlockedUntil != nil && row.BlockedUntil.After(r.now) {
			line += fmt.Sprintf(", codes refused until %s (backoff after %s)", stamp(*row.BlockedUntil), plural(int64(row.Failures), "wrong code"))
		}
	}
	if !r.cfg.TwoFactor.On() {
		line += "; two_factor.mode is off, so no code is asked for"
	}
	fmt.Fprintln(r.out, line)
	return nil
}

// twoFactorReset removes the user's two-factor: the secret, the recovery
// codes, the pending second steps and, with the row's device key, every
// remembered browser. The user signs in with the first factor alone (or
// must enrol again, when the policy requires it).
func (r *adminRun) twoFactorReset(u *models.User) error {
	row, err := r.twoFactorRow(u)
	if err != nil {
		return err
	}
	if row == nil {
		return fmt.Errorf("user %s has no two-factor; nothing changed", label(u))
	}
	codes, err := r.twoFactors().UnusedRecoveryCodes(r.ctx, u.ID)
	if err != nil {
		return err
	}
	if err := r.confirm(fmt.Sprintf("Remove the two-factor of user %s: its secret, %s and its remembered browsers? They then sign in with their first factor alone.",
		label(u), plural(int64(len(codes)), "unused recovery code"))); err != nil {
		return err
	}
	ok, err := r.twoFactors().DeleteTwoFactor(r.ctx, u.ID)
	if err != nil {
		return err
	}
	if !ok { // removed by someone else meanwhile
		return fmt.Errorf("user %s has no two-factor; nothing changed", label(u))
	}
	what := "two-factor"
	if row.ConfirmedAt == nil {
		what = "the unconfirmed two-factor enrolment"
	}
	fmt.Fprintf(r.out, "removed %s of user %s: its secret, %s, its pending second steps and its remembered browsers; its sessions stay (`sessions revoke --user` ends them)\n",
		what, label(u), plural(int64(len(codes)), "unused recovery code"))
	return nil
}

// twoFactorForgetDevices gives the user a new device key: every browser
// they asked to be remembered is asked for a code again.
func (r *adminRun) twoFactorForgetDevices(u *models.User) error {
	ok, err := r.twoFactors().ForgetDevices(r.ctx, u.ID, random.Base64URL(16))
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("user %s has no two-factor, so no remembered browsers; nothing changed", label(u))
	}
	fmt.Fprintf(r.out, "forgot every remembered browser of user %s: each asks for a code again\n", label(u))
	return nil
}
