package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/jwt"
)

// cookieStyle is everything cookies.style decides, derived once in New: a
// next-auth v4 deployment and an Auth.js v5 one differ in cookie names, the
// JWE format of session cookies, and the provider types
// GET /providers reports (app/nextauth).
type cookieStyle struct {
	cookiePrefix string     // "next-auth" or "authjs"
	jwt          jwt.Format // session cookies
	reportsOIDC  bool       // v5 lists "oidc"; v4 knows only "oauth" and "email"
}

func cookieStyleOf(style string) cookieStyle {
	if style == config.StyleAuthJS {
		return cookieStyle{cookiePrefix: "authjs", jwt: jwt.V5, reportsOIDC: true}
	}
	return cookieStyle{cookiePrefix: "next-auth", jwt: jwt.V4}
}
