package accountcentre

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// Apps are the applications a user let sign them in (the OpenID
// Provider's consents): listed on the page and in GET {base}/list-apps,
// revoked by POST {base}/revoke-app. nil when the OpenID Provider is off:
// the routes are not mounted and the page has no apps part.
type Apps interface {
	Consented(ctx context.Context, userID string) ([]openid.App, error)
	// RevokeApp withdraws the user's consent to the application and the
	// tokens it holds for them; false when the user had none to clientID.
	RevokeApp(ctx context.Context, userID, clientID string) (bool, error)
}

// errAppNotFound is revoking an application the user has not consented
// to (or not any more).
var errAppNotFound = errors.New("accountcentre: no consent to that application")

// appJSON is one application in GET {base}/list-apps. Scopes are as
// consented (openid, profile, ...), not the page's lines.
type appJSON struct {
	ClientID string    `json:"clientId"`
	Name     string    `json:"name"`
	Scopes   []string  `json:"scopes"`
	Since    time.Time `json:"since"`
}

// appName is an application's name, its id when it has none.
func appName(a openid.App) string {
	if a.Name != "" {
		return a.Name
	}
	return a.ClientID
}

// getApps is GET {base}/list-apps: the applications the user consented to.
func (h *Handler) getApps(c echo.Context, _ *web.Request, u user) error {
	list, err := h.apps.Consented(c.Request().Context(), u.ID)
	if err != nil {
		return err
	}
	out := make([]appJSON, 0, len(list))
	for _, a := range list {
		scopes := a.Scopes
		if scopes == nil {
			scopes = []string{}
		}
		out = append(out, appJSON{ClientID: a.ClientID, Name: appName(a), Scopes: scopes, Since: a.Since.UTC()})
	}
	web.NoStore(c)
	return c.JSON(http.StatusOK, out)
}

// postRevokeApp is POST {base}/revoke-app (clientId): the application can
// no longer sign the user in without asking again, nor use what it holds.
func (h *Handler) postRevokeApp(c echo.Context, rq *web.Request, u user) error {
	id := rq.Form.Get("clientId")
	ok := false
	if id != "" {
		var err error
		if ok, err = h.apps.RevokeApp(c.Request().Context(), u.ID, id); err != nil {
			return err
		}
	}
	if !ok {
		return h.refuse(c, rq, "revoking an application", errAppNotFound)
	}
	return h.done(c, rq, nil, "AppRevokedNotice")
}

// appItems are the page's apps part.
func (h *Handler) appItems(ctx context.Context, userID string) ([]views.AppItem, error) {
	list, err := h.apps.Consented(ctx, userID)
	if err != nil {
		return nil, err
	}
	items := make([]views.AppItem, 0, len(list))
	for _, a := range list {
		items = append(items, views.AppItem{ClientID: a.ClientID, Name: appName(a), Scopes: views.ScopeLines(a.Scopes), Since: day(a.Since)})
	}
	return items, nil
}
