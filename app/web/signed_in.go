package web

import (
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/signin"
)

// AfterSignIn answers a sign-in the core completed, whichever flow: a new
// CSRF token (it retires OAuth states derived from the old one, which may
// sit in IdP logs or browser history), then the callback URL, or first
// pages.new_user for a new user, as next-auth does.
func (k *Kit) AfterSignIn(c echo.Context, rq *Request, in *signin.SignedIn) error {
	k.IssueCSRF(c.Response())
	k.log.Info("signed in", "provider", in.Provider, "user", in.User.ID, "new", in.IsNew, "request_id", RequestID(c))
	if k.onSignIn != nil {
		k.onSignIn(in.Provider)
	}
	to := rq.CallbackURL
	if in.IsNew && k.newUser != "" {
		to = k.Redirect(WithQuery(k.newUser, url.Values{"callbackUrl": {rq.CallbackURL}}))
	}
	return k.SendRedirect(c, rq, to)
}
