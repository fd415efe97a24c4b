package app

import (
	"errors"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/session"
	"github.com/latchkey-auth/latchkey/models"
)

// signedIn describes a successful sign-in, whatever the provider.
type signedIn struct {
	User     *models.User
	Provider string
	IsNew    bool
	// CallbackURL is where the user goes next, already validated.
	CallbackURL string
}

// signInFailure is a session that could not be started, with its error code.
type signInFailure struct {
	code  string
	cause error
}

func (f *signInFailure) Error() string { return f.cause.Error() }

// finishSignIn starts a session in the configured strategy and redirects to
// the callback URL, or to pages.new_user for a new user, as next-auth does.
func (a *App) finishSignIn(c echo.Context, rq *request, in signedIn) error {
	if f := a.startSession(c, in); f != nil {
		return a.fail(c, rq, f.code, f.cause)
	}
	return a.afterSignIn(c, rq, in)
}

// startSession runs the JWT hook (jwt strategy) and creates the session.
// Callers that spent something to get here (an e-mail token) can undo it
// when this fails.
func (a *App) startSession(c echo.Context, in signedIn) *signInFailure {
	ctx, w, r := c.Request().Context(), c.Response(), c.Request()
	su := session.User{ID: in.User.ID, Name: in.User.Name, Email: in.User.Email, Image: in.User.Image}
	var claims map[string]any
	if a.sessions.Name() == "jwt" {
		trigger := "signIn"
		if in.IsNew {
			trigger = "signUp"
		}
		claims = a.hooks.JWT(session.DefaultClaims(su), JWTInput{User: in.User, Provider: in.Provider, Trigger: trigger, IsNewUser: in.IsNew})
		if claims == nil {
			return &signInFailure{ErrAccessDenied, errors.New("jwt hook returned no token")}
		}
	}
	if err := a.sessions.Create(ctx, w, r, su, claims); err != nil {
		return &signInFailure{ErrCallback, err}
	}
	// A new CSRF token at every sign-in retires OAuth states derived from
	// the old one (they may sit in IdP logs or browser history).
	_, csrfCookie := a.csrf.New()
	a.cookies.Set(w, a.names.CSRF, csrfCookie, timeZero, 0)
	a.log.Info("signed in", "provider", in.Provider, "user", in.User.ID, "new", in.IsNew)
	return nil
}

// afterSignIn redirects a signed-in user to the callback URL, or first to
// pages.new_user for a new user.
func (a *App) afterSignIn(c echo.Context, rq *request, in signedIn) error {
	to := in.CallbackURL
	if in.IsNew && a.cfg.Pages.NewUser != "" {
		to = a.redirect(withQuery(a.cfg.Pages.NewUser, url.Values{"callbackUrl": {in.CallbackURL}}))
	}
	return a.sendRedirect(c, rq, to)
}

// currentUser is the user of the request's session, if any (for linking).
func (a *App) currentUser(c echo.Context) (*session.Session, error) {
	s, _, err := a.sessions.Read(c.Request().Context(), c.Request())
	return s, err
}
