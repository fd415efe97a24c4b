package app

import (
	"context"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/oauth/catalogue"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
)

// outlive every session and a password reset. So a link is told to the
// user's address, and a reset or "sign out everywhere" may remove them
// (form field removeLinked=1): a link made from a borrowed or stolen
// session does not stay a way into the account.

// formRemoveLinked is the form field that asks a reset or "sign out
// everywhere" to remove the user's linked sign-in methods.
const formRemoveLinked = "removeLinked"

// tellMethodAdded tells the user's verified address that an identity at p
// was linked to the account (accounts.Service.TellMethodAdded).
func (a *App) tellMethodAdded(ctx context.Context, u *models.User, p config.Provider) {
	a.pw.rules.TellMethodAdded(ctx, u, p.ID, catalogue.DisplayName(p))
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
