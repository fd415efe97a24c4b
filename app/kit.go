package app

import (
	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accountpages"
	"github.com/latchkey-auth/latchkey/app/metrics"
	"github.com/latchkey-auth/latchkey/app/nextauth"
	"github.com/latchkey-auth/latchkey/app/signin"
	"github.com/latchkey-auth/latchkey/app/web"
)

// apiAfterKit is the NextAuth.js API handler, which the kit reaches to
// count failed sign-ins but which is built after it (it uses the kit).
type apiAfterKit struct{ h *nextauth.Handler }

func (a *apiAfterKit) countFailedSignIn(c echo.Context, code signin.Code) {
	a.h.CountFailedSignIn(c, code)
}

// buildKit builds what every handler shares (app/web): request init,
// redirects, pages in the request's language, the failure adapter.
func (w *wiring) buildKit(api *apiAfterKit) *web.Kit {
	return web.NewKit(web.KitConfig{
		Base: w.base, Log: w.log, Names: w.names, Cookies: w.cookies, CSRF: w.csrf, Policy: w.policy,
		RedirectHook: w.hooks.Redirect, Langs: w.langs, Theme: w.theme.page, MaxBodyBytes: w.cfg.MaxBodyBytes,
		OnFailure: api.countFailedSignIn, NewUserPage: w.cfg.Pages.NewUser,
		OwnTextRoutes: append(nextauth.OwnTextRoutes(), accountpages.OwnTextRoutes()...),
		OnSignIn:      func(provider string) { w.metrics.SignIn(provider, metrics.OutcomeSuccess) },
	})
}
