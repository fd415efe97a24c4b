package accountcentre

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/i18n"
	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/app/redirect"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/views"
)

// The apps part's own logic, on a fake Apps: the handler's actions are
// called directly for a signed-in user (the black-box tests in app/ drive
// the routes once the OpenID Provider is wired).

// fakeApps holds consents by user, then by client id.
type fakeApps struct {
	consents map[string][]openid.App
	fail     error
	revoked  []string // "user/client" of every RevokeApp call
}

func (f *fakeApps) Consented(_ context.Context, userID string) ([]openid.App, error) {
	return f.consents[userID], f.fail
}

func (f *fakeApps) RevokeApp(_ context.Context, userID, clientID string) (bool, error) {
	f.revoked = append(f.revoked, userID+"/"+clientID)
	if f.fail != nil {
		return false, f.fail
	}
	for i, a := range f.consents[userID] {
		if a.ClientID == clientID {
			f.consents[userID] = append(f.consents[userID][:i], f.consents[userID][i+1:]...)
			return true, nil
		}
	}
	return false, nil
}

var since = time.Date(2026, 5, 7, 10, 30, 0, 0, time.FixedZone("CEST", 2*3600))

func newAppsHandler(t *testing.T) (*Handler, *fakeApps) {
	t.Helper()
	langs, err := i18n.Load(views.Locales(), "", nil)
	require.NoError(t, err)
	base := config.Base{Origin: "https://auth.example.com", Path: "/api/auth", Secure: true}
	kit := web.NewKit(web.KitConfig{Base: base, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Langs: langs,
		Policy: redirect.NewPolicy(base.Origin, nil)})
	f := &fakeApps{consents: map[string][]openid.App{
		"ann": {
			{ClientID: "wiki", Name: "Wiki", Scopes: []string{"openid", "email", "profile", "read:calendar"}, Since: since},
			{ClientID: "ci", Scopes: []string{"openid"}, Since: since},
		},
		"bob": {{ClientID: "wiki", Name: "Wiki", Scopes: []string{"openid"}, Since: since}},
	}}
	return New(Deps{Kit: kit, Apps: f, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now}), f
}

// call runs an action of user uid on a request with form (nil: a GET).
func call(t *testing.T, h *Handler, act userAction, uid string, form url.Values, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	method := http.MethodGet
	if form != nil {
		method = http.MethodPost
	}
	r := httptest.NewRequest(method, "https://auth.example.com/api/auth/x", nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	c := echo.New().NewContext(r, w)
	rq := &web.Request{Form: form, JSONMode: form.Get("json") == "true"}
	require.NoError(t, act(c, rq, user{User: &models.User{ID: uid}}))
	return w
}

func TestListApps(t *testing.T) {
	h, _ := newAppsHandler(t)
	w := call(t, h, h.getApps, "ann", nil)
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Header().Get("Cache-Control"), "no-store")
	require.JSONEq(t, `[
		{"clientId":"wiki","name":"Wiki","scopes":["openid","email","profile","read:calendar"],"since":"2026-05-07T08:30:00Z"},
		{"clientId":"ci","name":"ci","scopes":["openid"],"since":"2026-05-07T08:30:00Z"}
	]`, w.Body.String())

	w = call(t, h, h.getApps, "nobody", nil)
	require.Equal(t, http.StatusOK, w.Code)
	require.JSONEq(t, `[]`, w.Body.String(), "an empty list, never null")
}

func TestRevokeApp(t *testing.T) {
	h, f := newAppsHandler(t)

	// JSON: revoked; then the same again, another user's, none: not found.
	w := call(t, h, h.postRevokeApp, "ann", url.Values{"clientId": {"wiki"}, "json": {"true"}})
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.JSONEq(t, `{"ok":true}`, w.Body.String())
	require.Equal(t, []string{"ann/wiki"}, f.revoked)
	require.Len(t, f.consents["ann"], 1)
	require.Len(t, f.consents["bob"], 1, "another user's consent to the same app stays")

	for _, id := range []string{"wiki", "unknown", ""} {
		w = call(t, h, h.postRevokeApp, "ann", url.Values{"clientId": {id}}, "Accept", "application/json")
		require.Equal(t, http.StatusNotFound, w.Code, id)
		require.JSONEq(t, `{"error":"NotFound"}`, w.Body.String(), id)
	}
	require.Equal(t, []string{"ann/wiki", "ann/wiki", "ann/unknown"}, f.revoked, "no clientId: nothing asked")

	// The page's forms: back to the page with the notice or the error,
	// keeping an explicit language.
	w = call(t, h, h.postRevokeApp, "ann", url.Values{"clientId": {"ci"}, "lang": {"de"}})
	require.Equal(t, http.StatusFound, w.Code)
	require.Equal(t, "https://auth.example.com/api/auth/account?notice=AppRevokedNotice&lang=de", w.Header().Get("Location"))
	require.True(t, notices["AppRevokedNotice"], "the page shows the notice")
	w = call(t, h, h.postRevokeApp, "ann", url.Values{"clientId": {"ci"}})
	require.Equal(t, http.StatusFound, w.Code)
	require.Equal(t, "https://auth.example.com/api/auth/account?error=AppNotFound", w.Header().Get("Location"))
	require.Equal(t, "AppNotFound", pageError("AppNotFound"), "the page shows the error")

	// A failure is the kit's to answer, not a refusal.
	f.fail = errors.New("database down")
	c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/", nil), httptest.NewRecorder())
	require.ErrorIs(t, h.postRevokeApp(c, &web.Request{Form: url.Values{"clientId": {"wiki"}}}, user{User: &models.User{ID: "bob"}}), f.fail)
}

func TestAppItems(t *testing.T) {
	h, _ := newAppsHandler(t)
	items, err := h.appItems(context.Background(), "ann")
	require.NoError(t, err)
	require.Equal(t, []views.AppItem{
		{ClientID: "wiki", Name: "Wiki", Scopes: []string{"ScopeOpenID", "ScopeProfile", "ScopeEmail", "read:calendar"}, Since: "2026-05-07"},
		{ClientID: "ci", Name: "ci", Scopes: []string{"ScopeOpenID"}, Since: "2026-05-07"},
	}, items)
}

// routes records what Mount mounts.
type routes []string

func (r *routes) Get(p string, _ echo.HandlerFunc, _ ...echo.MiddlewareFunc) {
	*r = append(*r, "GET "+p)
}
func (r *routes) Page(p string, _ web.Action, _ ...echo.MiddlewareFunc) { *r = append(*r, "GET "+p) }
func (r *routes) Post(p string, _, _ web.Action, _ ...echo.MiddlewareFunc) {
	*r = append(*r, "POST "+p)
}
func (r *routes) PostWithoutCSRF(p string, _ echo.HandlerFunc) { *r = append(*r, "POST "+p) }
func (r *routes) RootGet(p string, _ echo.HandlerFunc)         { *r = append(*r, "GET "+p) }
func (r *routes) RootAny(p string, _ echo.HandlerFunc)         { *r = append(*r, "ANY "+p) }
func (r *routes) Protocol(p string, _ http.Handler)            { *r = append(*r, "ANY "+p) }

func TestAppsRoutesOnlyWithTheProvider(t *testing.T) {
	h, _ := newAppsHandler(t)
	var on routes
	h.Mount(&on)
	require.Subset(t, on, []string{"GET /list-apps", "POST /revoke-app"})
	h.apps = nil
	var off routes
	h.Mount(&off)
	require.NotContains(t, off, "GET /list-apps")
	require.NotContains(t, off, "POST /revoke-app")
	require.Len(t, off, len(on)-2)
}
