package app

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// afterSignIn answers a sign-in the core completed: a new CSRF token (it
// retires OAuth states derived from the old one, which may sit in IdP logs
// or browser history), then the callback URL, or first pages.new_user for a
// new user, as next-auth does.
func (a *App) afterSignIn(c echo.Context, rq *web.Request, in *signin.SignedIn) error {
	a.kit.IssueCSRF(c.Response())
	a.log.Info("signed in", "provider", in.Provider, "user", in.User.ID, "new", in.IsNew, "request_id", web.RequestID(c))
	a.metrics.SignIn(in.Provider, metrics.OutcomeSuccess)
	to := rq.CallbackURL
	if in.IsNew && a.cfg.Pages.NewUser != "" {
		to = a.kit.Redirect(web.WithQuery(a.cfg.Pages.NewUser, url.Values{"callbackUrl": {rq.CallbackURL}}))
	}
	return a.kit.SendRedirect(c, rq, to)
}

// browser is the request as the sign-in core sees it (signin.Browser): the
// session it holds, and the response a new session's cookie goes to.
type browser struct {
	sessions session.Strategy
	w        http.ResponseWriter
	r        *http.Request
	metrics  *metrics.Metrics
}

func (a *App) browser(c echo.Context) browser {
	return browser{sessions: a.sessions, w: c.Response(), r: c.Request(), metrics: a.metrics}
}

func (b browser) SignedInUser(ctx context.Context) (string, error) {
	s, _, err := b.sessions.Read(ctx, b.r)
	if err != nil || s == nil {
		return "", err
	}
	return s.User.ID, nil
}

func (b browser) SignedInSince(ctx context.Context) (string, time.Time, error) {
	s, _, err := b.sessions.Read(ctx, b.r)
	if err != nil || s == nil {
		return "", time.Time{}, err
	}
	return s.User.ID, s.SignedIn, nil
}

func (b browser) StartSession(ctx context.Context, u session.User, claims map[string]any) error {
	if err := b.sessions.Create(ctx, b.w, b.r, u, claims); err != nil {
		return err
	}
	b.metrics.SessionCreated()
	return nil
}

func (b browser) EndSession(ctx context.Context) error {
	return b.sessions.Destroy(ctx, b.w, b.r)
}
