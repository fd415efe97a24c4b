package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/views"
)

// Linked sign-in methods (OAuth identities linked to an existing user)
// outlive every session and a password reset. So a link is told to the
// user's address, and a reset or "sign out everywhere" may remove them
// (form field removeLinked=1): a link made from a borrowed or stolen
// session does not stay a way into the account.

// formRemoveLinked is the form field that asks a reset or "sign out
// everywhere" to remove the user's linked sign-in methods.
const formRemoveLinked = "removeLinked"

// tellMethodAdded mails the user's verified address that an identity at p
// was linked to the account. A mail that fails does not undo the link (the
// sign-in went through): it is logged, once, without the address.
func (a *App) tellMethodAdded(ctx context.Context, u *models.User, p config.Provider) {
	if u.Email == nil || *u.Email == "" || u.EmailVerified == nil || !a.pw.canMail {
		return
	}
	resetURL := ""
	if !a.resetOff() {
		resetURL = a.base.URL("/reset") + "?lang=" + a.kit.MailLang(ctx).Tag()
	}
	m := views.MethodAddedEmail(a.kit.MailLang(ctx), web.HostOf(a.base.Origin), providerName(p), resetURL)
	if err := a.pw.mail.send(ctx, *u.Email, m); err != nil {
		// The SMTP library's error may quote the recipient: mask it.
		cause := strings.ReplaceAll(err.Error(), *u.Email, email.Mask(*u.Email))
		a.log.Error("sign-in method linked, but the notice e-mail failed", "user", u.ID, "provider", p.ID, "err", cause)
	}
}

// removeLinkedMethods removes the user's linked sign-in methods
// (signin.Service.UnlinkAccounts: never the last way to sign in).
// withPassword says the user has just set a password.
func (a *App) removeLinkedMethods(ctx context.Context, u *models.User, withPassword bool) error {
	other := withPassword
	if !other {
		var err error
		if other, err = a.otherSignInWay(ctx, u); err != nil {
			return err
		}
	}
	n, err := a.core.UnlinkAccounts(ctx, u.ID, other)
	if err != nil {
		return err
	}
	a.log.Info("linked sign-in methods removed", "user", u.ID, "removed", n, "oldest_kept", !other)
	return nil
}

// otherSignInWay reports whether the user can sign in without a linked
// identity: with a password, a passkey, or an e-mailed link to a verified
// address.
func (a *App) otherSignInWay(ctx context.Context, u *models.User) (bool, error) {
	if a.emailSignInOffered() && u.Email != nil && *u.Email != "" && u.EmailVerified != nil {
		return true, nil
	}
	pw, err := a.passwordSignInOffered(ctx, u.ID)
	if err != nil || pw {
		return pw, err
	}
	if len(a.passkeys.rps) == 0 {
		return false, nil
	}
	keys, err := a.store.AuthenticatorsOf(ctx, u.ID)
	if err != nil {
		return false, fmt.Errorf("list the user's passkeys: %w", err)
	}
	return len(keys) > 0, nil
}

// asksRemoveLinked reads the form field: the checkbox's "1", or "true" or
// "on" from a client of its own.
func asksRemoveLinked(rq *web.Request) bool {
	switch rq.Form.Get(formRemoveLinked) {
	case "1", "true", "on":
		return true
	}
	return false
}
