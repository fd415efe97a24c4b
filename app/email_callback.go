package app

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/views"
)

// errCodeConfiguration is the lower-case code next-auth v4 redirects to for
// a link without a token (it renders the 500 "Server error" page).
const errCodeConfiguration = "configuration"

// emailCallback redeems a magic link. GET is the link itself, or with
// confirm: true only a page whose button POSTs it; a POST (from that page)
// must carry the CSRF token. HEAD never gets here (the router answers 400),
// so scanners probing links with HEAD spend nothing.
func (a *App) emailCallback(c echo.Context, rq *request, p config.Provider) error {
	ep := a.emails[p.ID]
	if ep == nil {
		return a.fail(c, rq, ErrVerification, fmt.Errorf("e-mail provider %s is not set up", p.ID))
	}
	params := c.QueryParams()
	post := c.Request().Method == http.MethodPost
	if post {
		params = rq.form
	}
	token := params.Get("token")
	switch {
	case token == "":
		return a.fail(c, rq, errCodeConfiguration, errors.New("e-mail callback without a token"))
	case post && !rq.csrfVerified:
		return a.confirmPage(c, rq, p, params, http.StatusForbidden, "Your sign-in request expired. Please try again.")
	case !post && ep.confirm:
		return a.confirmPage(c, rq, p, params, http.StatusOK, "")
	}
	return a.redeemLink(c, rq, p, token, params.Get("email"))
}

// redeemLink checks the token without spending it, asks the SignIn hook,
// then consumes it and verifies the address in one transaction, and starts
// the session. Until that transaction commits nothing has changed, so any
// refusal leaves the link as it was.
func (a *App) redeemLink(c echo.Context, rq *request, p config.Provider, token, addr string) error {
	ctx, now := c.Request().Context(), a.now()
	hash := email.HashToken(token, a.cfg.Secret)
	row, err := a.store.VerificationTokenByHash(ctx, hash)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return a.fail(c, rq, ErrVerification, errors.New("unknown or already used sign-in link"))
	case err != nil:
		return a.fail(c, rq, ErrCallback, err)
	case !row.Expires.After(now):
		return a.fail(c, rq, ErrVerification, fmt.Errorf("sign-in link expired at %s", row.Expires.Format("2006-01-02T15:04:05Z07:00")))
	case addr != "" && addr != row.Identifier:
		return a.fail(c, rq, ErrVerification, errors.New("the link's e-mail does not match its token"))
	}

	candidate, err := a.emailUser(ctx, row.Identifier)
	if err != nil {
		return a.fail(c, rq, ErrCallback, err)
	}
	if refusal := a.checkSignIn(c, SignInInput{User: *candidate, Provider: p.ID, Type: config.TypeEmail, Email: row.Identifier}); refusal != nil {
		return a.refuse(c, rq, refusal)
	}
	user, isNew, err := a.store.RedeemVerificationToken(ctx, row.Identifier, hash, now)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return a.fail(c, rq, ErrVerification, errors.New("sign-in link used by a concurrent request"))
	case errors.Is(err, models.ErrConflict):
		return a.fail(c, rq, ErrEmailCreateAccount, err)
	case err != nil:
		return a.fail(c, rq, ErrCallback, err)
	}
	a.endOtherUsersSession(c, user.ID)
	in := signedIn{User: user, Provider: p.ID, IsNew: isNew, CallbackURL: rq.callbackURL}
	if f := a.startSession(c, in); f != nil {
		// No session, so the link must not be spent: put the token back.
		if err := a.store.CreateVerificationToken(ctx, row.Identifier, hash, row.Expires); err != nil {
			a.log.Warn("sign-in link could not be restored after a failed sign-in", "err", err)
		}
		return a.fail(c, rq, f.code, f.cause)
	}
	return a.afterSignIn(c, rq, in)
}

// endOtherUsersSession deletes the browser's database session when it
// belongs to someone else, as next-auth does before an e-mail sign-in, so
// the replaced session does not live on in the table.
func (a *App) endOtherUsersSession(c echo.Context, userID string) {
	if a.sessions.Name() != config.StrategyDatabase {
		return
	}
	cur, err := a.currentUser(c)
	if err != nil || cur == nil || cur.User.ID == userID {
		return
	}
	if err := a.sessions.Destroy(c.Request().Context(), c.Response(), c.Request()); err != nil {
		a.log.Warn("previous session not removed", "err", err)
	}
}

// confirmPage shows the "Sign in" button for a link instead of using it.
// It looks nothing up, so it tells a scanner nothing about the token.
func (a *App) confirmPage(c echo.Context, rq *request, p config.Provider, params url.Values, status int, msg string) error {
	noStore(c)
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return render(c, status, views.ConfirmSignInPage(views.ConfirmSignIn{
		Page:        a.page("Sign In"),
		Action:      a.base.URL("/callback/" + p.ID),
		CSRFToken:   rq.csrfToken,
		Token:       params.Get("token"),
		Email:       params.Get("email"),
		CallbackURL: rq.callbackURL,
		Host:        hostOf(a.base.Origin),
		Error:       msg,
	}))
}
