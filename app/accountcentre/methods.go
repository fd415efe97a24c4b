package accountcentre

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/web"
)

// accountJSON is one linked identity in GET {base}/list-accounts.
type accountJSON struct {
	ID        string    `json:"id"`
	Provider  string    `json:"provider"`
	Name      string    `json:"name"`
	Label     string    `json:"label"` // the provider's e-mail or login for it; "" when unknown
	CreatedAt time.Time `json:"createdAt"`
}

// getAccounts is GET {base}/list-accounts: the user's linked identities.
func (h *Handler) getAccounts(c echo.Context, _ *web.Request, u user) error {
	list, err := h.rules.LinkedAccounts(c.Request().Context(), u.ID)
	if err != nil {
		return err
	}
	out := make([]accountJSON, 0, len(list))
	for _, a := range list {
		j := accountJSON{ID: a.ID, Provider: a.Provider, Name: h.providerName(a.Provider), CreatedAt: a.CreatedAt.UTC()}
		if a.Label != nil {
			j.Label = *a.Label
		}
		out = append(out, j)
	}
	web.NoStore(c)
	return c.JSON(http.StatusOK, out)
}

// providerName is a provider's display name (its id when unknown: a
// provider removed from the config since).
func (h *Handler) providerName(id string) string {
	if n, ok := h.offers.Names[id]; ok {
		return n
	}
	return id
}

// postUnlink is POST {base}/unlink-account (id): a privileged session
// (accounts.Service.Privileged), never the last way to sign in; the
// address is told.
func (h *Handler) postUnlink(c echo.Context, rq *web.Request, u user) error {
	ctx := h.kit.MailContext(c, rq)
	if err := h.rules.UnlinkMethod(ctx, u.who, u.User, rq.Form.Get("id"), h.providerName); err != nil {
		return h.refuse(c, rq, "unlinking a sign-in method", err)
	}
	return h.done(c, rq, nil, "MethodUnlinked")
}

// postLink is POST {base}/link-account (provider): for a privileged
// session (accounts.Service.Privileged: a recent sign-in, with the second
// factor once it is on), the provider's sign-in starts as POST
// /signin/:provider does, and its callback links the identity to this
// user (signin.OAuth, which checks the same again and tells the address).
// JSON mode answers {url} of the provider's authorization request.
func (h *Handler) postLink(c echo.Context, rq *web.Request, u user) error {
	if err := h.rules.Privileged(c.Request().Context(), u.who); err != nil {
		return h.refuse(c, rq, "linking a sign-in method", err)
	}
	id := rq.Form.Get("provider")
	for _, p := range h.offers.Linkable {
		if p.ID == id {
			if rq.Form.Get("callbackUrl") == "" { // back to the page, not to the last sign-in's target
				h.kit.SetCallbackURL(c, rq, h.base.URL(page))
			}
			return h.linker.SignIn(c, rq, p)
		}
	}
	return h.refuse(c, rq, "linking a sign-in method", accounts.ErrNoSuchMethod)
}

// linkable are the OAuth providers the user has no identity at yet.
func (h *Handler) linkable(linked map[string]bool) []config.Provider {
	var out []config.Provider
	for _, p := range h.offers.Linkable {
		if !linked[p.ID] {
			out = append(out, p)
		}
	}
	return out
}
