package app

import (
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/jwt"
)

// dialect is everything cookies.style decides, derived once in New: a
// next-auth v4 deployment and an Auth.js v5 one differ in cookie names, the
// JWE format of session cookies, and the provider types
// GET /providers reports.
type dialect struct {
	cookiePrefix string     // "next-auth" or "authjs"
	jwt          jwt.Format // session cookies
	reportsOIDC  bool       // v5 lists "oidc"; v4 knows only "oauth" and "email"
}

func dialectOf(style string) dialect {
	if style == config.StyleAuthJS {
		return dialect{cookiePrefix: "authjs", jwt: jwt.V5, reportsOIDC: true}
	}
	return dialect{cookiePrefix: "next-auth", jwt: jwt.V4}
}

// wireType is the provider type GET /providers reports.
func (d dialect) wireType(t string) string {
	if t == config.TypeOIDC && !d.reportsOIDC {
		return config.TypeOAuth
	}
	return t
}
