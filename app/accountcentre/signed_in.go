package accountcentre

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
)

// user is the request's signed-in user and its session as the guarded
// changes check it (accounts.Service.Privileged: when and how it signed in).
type user struct {
	*models.User
	who accounts.SignedIn
}

// userAction is an action of the signed-in user.
type userAction func(c echo.Context, rq *web.Request, u user) error

// signedIn runs next for the request's signed-in user. Without one, the
// page and its forms send the browser to sign in (back here after), and
// the API (the GET lists, JSON posts) answers 401 {"error":
// "SessionRequired"}.
func (h *Handler) signedIn(next userAction) web.Action { return h.withUser(false, next) }

// signedInAPI is signedIn for the JSON lists.
func (h *Handler) signedInAPI(next userAction) web.Action { return h.withUser(true, next) }

func (h *Handler) withUser(api bool, next userAction) web.Action {
	return func(c echo.Context, rq *web.Request) error {
		ctx := c.Request().Context()
		s, _, err := h.sessions.Read(ctx, c.Request())
		if err != nil {
			return web.TryLater("read the signed-in user", err)
		}
		var u *models.User
		var who accounts.SignedIn
		if s != nil {
			who = accounts.SignedIn{UserID: s.User.ID, Since: s.Proven(), Methods: s.Methods()}
			u, err = h.rules.SignedInUser(ctx, who.UserID)
			switch {
			case errors.Is(err, accounts.ErrSignedOut): // deleted while the session lives on
				u = nil
			case err != nil:
				return web.TryLater("read the signed-in user", err)
			}
		}
		if u == nil {
			if api || wantsJSON(c, rq) {
				web.NoStore(c)
				return c.JSON(http.StatusUnauthorized, map[string]string{"error": "SessionRequired"})
			}
			return h.kit.ToSignIn(c, rq, page)
		}
		return next(c, rq, user{User: u, who: who})
	}
}
