package client

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/jwt"
)

// LocalOptions configure a [Local].
type LocalOptions struct {
	// Secrets are latchkey's AUTH_SECRET values, in rotation order as
	// latchkey orders them (AUTH_SECRET_3 … AUTH_SECRET_1, AUTH_SECRET
	// last); a token opening under any of them is accepted. Required.
	Secrets []string
	// CookieNames are the cookies read (and their chunks), each in the
	// format its name implies: "…next-auth.session-token" is a next-auth v4
	// token, any other name an Auth.js v5 token salted with that name.
	// Default: DefaultCookieNames().
	CookieNames []string
	// Now is the clock expiry is checked against. Default time.Now.
	Now func() time.Time
}

// Local resolves sessions by decrypting the session cookie with the shared
// secret, as next-auth's getToken does: session.strategy jwt only, no
// network. Keys are derived once, in NewLocal. Safe for concurrent use.
//
// A JWT session cannot be revoked: signing out clears the browser's cookie,
// but a copy of the cookie stays valid here until its exp. Use [Remote] when
// that matters (and the database strategy on latchkey).
type Local struct {
	cookies []localCookie
	now     func() time.Time
}

// localCookie is one cookie name and its keys, one per secret.
type localCookie struct {
	name string
	keys []*jwt.Key
}

// NewLocal derives the keys of every (cookie, secret) pair.
func NewLocal(o LocalOptions) (*Local, error) {
	if len(o.Secrets) == 0 {
		return nil, errors.New("client: LocalOptions.Secrets is empty")
	}
	names := o.CookieNames
	if len(names) == 0 {
		names = DefaultCookieNames()
	}
	l := &Local{now: o.Now}
	if l.now == nil {
		l.now = time.Now
	}
	for _, name := range names {
		format, salt := jwt.V5, name
		if strings.HasSuffix(name, "next-auth.session-token") {
			format, salt = jwt.V4, "" // next-auth v4's session key has no salt
		}
		lc := localCookie{name: name}
		for i, secret := range o.Secrets {
			key, err := jwt.NewKey(secret, salt, format)
			if err != nil {
				return nil, fmt.Errorf("client: secret %d: %w", i+1, err)
			}
			lc.keys = append(lc.keys, key)
		}
		l.cookies = append(l.cookies, lc)
	}
	return l, nil
}

// User implements Resolver. A cookie that does not open under any secret,
// or whose token has expired, is nobody; it never returns an error.
func (l *Local) User(r *http.Request) (*User, error) {
	now := l.now()
	for _, lc := range l.cookies {
		token := cookies.ReadChunked(r, lc.name)
		if token == "" {
			continue
		}
		for _, key := range lc.keys {
			claims, err := key.Decode(token, now)
			if err != nil {
				continue
			}
			return userFromClaims(claims), nil
		}
	}
	return nil, nil
}

// userFromClaims reads next-auth's default token claims.
func userFromClaims(c map[string]any) *User {
	str := func(k string) string { s, _ := c[k].(string); return s }
	exp, _ := c["exp"].(float64) // Decode requires a number
	return &User{
		ID:      str("sub"),
		Email:   str("email"),
		Name:    str("name"),
		Image:   str("picture"),
		Expires: time.Unix(int64(exp), 0),
	}
}
