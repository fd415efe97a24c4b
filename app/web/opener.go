package web

import "github.com/labstack/echo/v4"

// KeepOpener marks a page of a sign-in or sign-out journey, which an app
// may open in a popup and wait on through window.opener: next-auth's
// pages, what sign-in links to (sign-up, reset), the two-factor step and
// the OpenID Provider's pages (OpenID Connect's display=popup, the popup
// sign-in of oidc-client-ts and its kin). Every other page is answered with
// Cross-Origin-Opener-Policy: same-origin (the app's documentPolicy), which
// would cut the popup from the app that opened it for good, even once it is
// back on the app's origin; these say unsafe-none, the browsers' default.
func KeepOpener(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header()[HeaderCOOP] = coopUnsafeNone
		return next(c)
	}
}

// HeaderCOOP is Cross-Origin-Opener-Policy, canonical.
const HeaderCOOP = "Cross-Origin-Opener-Policy"

var coopUnsafeNone = HeaderValue("unsafe-none")
