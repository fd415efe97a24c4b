package accountpages

import (
	"context"

	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
)

// Linked sign-in methods (OAuth identities linked to an existing user)
// outlive every session and a password reset. So a link is told to the
// user's address, and a reset or "sign out everywhere" may remove them
// (form field removeLinked=1): a link made from a borrowed or stolen
// session does not stay a way into the account.

// formRemoveLinked is the form field that asks a reset or "sign out
// everywhere" to remove the user's linked sign-in methods.
const formRemoveLinked = "removeLinked"

// TellMethodAdded tells the user's verified address that an identity at
// a provider (its id, and its display name for the e-mail) was linked to
// the account (accounts.Service.TellMethodAdded). The OAuth flow calls it
// after a link, as a func value the wiring hands it; ctx carries the
// e-mail's language (web.Kit.MailContext).
func (h *Handler) TellMethodAdded(ctx context.Context, u *models.User, providerID, providerName string) {
	h.rules.TellMethodAdded(ctx, u, providerID, providerName)
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
