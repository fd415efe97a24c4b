package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/views"
)

// emailSignIn sends a magic link, as next-auth's e-mail sign-in: normalise
// the address, count it against the rate limits, ask the SignIn hook (a
// verification request), store the token's hash, deliver, and send the
// browser to verify-request. Every refusal leaves nothing stored and
// nothing sent; a failed delivery removes the token it stored.
func (a *App) emailSignIn(c echo.Context, rq *request, p config.Provider) error {
	ep := a.emails[p.ID]
	if ep == nil {
		return a.fail(c, rq, ErrEmailSignin, fmt.Errorf("e-mail provider %s is not set up", p.ID))
	}
	ctx, now := c.Request().Context(), a.now()
	addr, err := email.Normalize(rq.form.Get("email"))
	if err != nil {
		return a.fail(c, rq, ErrEmailSignin, fmt.Errorf("provider %s: %w", p.ID, err))
	}
	if ok, why := ep.allow(addr, c.RealIP(), now); !ok {
		return a.fail(c, rq, ErrEmailSignin, fmt.Errorf("provider %s: rate limited: %s", p.ID, why))
	}
	user, err := a.emailUser(ctx, addr)
	if err != nil {
		return a.fail(c, rq, ErrEmailSignin, err)
	}
	in := SignInInput{User: *user, Provider: p.ID, Type: config.TypeEmail, Email: addr, VerificationRequest: true}
	if refusal := a.checkSignIn(c, in); refusal != nil {
		return a.refuse(c, rq, refusal)
	}

	token, err := email.NewToken()
	if err != nil {
		return a.fail(c, rq, ErrEmailSignin, err)
	}
	hash := email.HashToken(token, a.cfg.Secret)
	if err := a.store.CreateVerificationToken(ctx, addr, hash, now.Add(ep.maxAge)); err != nil {
		return a.fail(c, rq, ErrEmailSignin, err)
	}
	link := email.Link(a.base.URL("/callback/"+p.ID), rq.callbackURL, token, addr)
	msg, err := a.signInMessage(ctx, ep, addr, link)
	if err == nil {
		err = a.deliver(ctx, ep, msg, link)
	}
	if err != nil {
		// The request may be cancelled already; the clean-up must still run.
		if derr := a.store.DeleteVerificationToken(context.WithoutCancel(ctx), addr, hash); derr != nil {
			a.log.Error("undelivered sign-in token not removed", "provider", p.ID, "err", derr)
		}
		return a.fail(c, rq, ErrEmailSignin, fmt.Errorf("provider %s: %w", p.ID, err))
	}
	q := url.Values{"provider": {p.ID}, "type": {config.TypeEmail}}
	return a.sendRedirect(c, rq, a.base.URL("/verify-request")+"?"+q.Encode())
}

// emailUser is the user next-auth shows the SignIn hook for an address: the
// stored one, or a stand-in whose id is the address itself.
func (a *App) emailUser(ctx context.Context, addr string) (*models.User, error) {
	u, err := a.store.UserByEmail(ctx, addr)
	if errors.Is(err, models.ErrNotFound) {
		e := addr
		return &models.User{ID: addr, Email: &e}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up user by e-mail: %w", err)
	}
	return u, nil
}

// signInMessage renders the e-mail from the views (views/email.templ), so
// operators change its wording there.
func (a *App) signInMessage(ctx context.Context, ep *emailProvider, to, link string) (email.Message, error) {
	d := views.SignInEmail{URL: link, Host: hostOf(a.base.Origin)}
	var text, html strings.Builder
	if err := views.SignInEmailText(d).Render(ctx, &text); err != nil {
		return email.Message{}, fmt.Errorf("render e-mail text: %w", err)
	}
	if err := views.SignInEmailHTML(d).Render(ctx, &html); err != nil {
		return email.Message{}, fmt.Errorf("render e-mail HTML: %w", err)
	}
	return email.Message{
		From:    ep.from,
		To:      to,
		Subject: views.SignInEmailSubject(d),
		Text:    text.String(),
		HTML:    html.String(),
	}, nil
}
