package session

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/jwt"
)

// JWT keeps the session in the cookie as an encrypted JWT that next-auth
// (v4 format) or Auth.js (v5 format) can also read.
type JWT struct {
	keys   []*jwt.Key // the first encrypts; every one decrypts (secret rotation)
	name   string
	writer cookies.Writer
	life   Lifetime
}

// NewJWT derives one key per secret, once: v4 uses an empty salt, v5 the
// cookie name. The first secret encrypts new tokens.
func NewJWT(secrets []string, format jwt.Format, name string, w cookies.Writer, life Lifetime) (*JWT, error) {
	if len(secrets) == 0 {
		return nil, errors.New("session key: no secret")
	}
	salt := ""
	if format == jwt.V5 {
		salt = name
	}
	j := &JWT{name: name, writer: w, life: life}
	for i, secret := range secrets {
		key, err := jwt.NewKey(secret, salt, format)
		if err != nil {
			return nil, fmt.Errorf("session key %d: %w", i+1, err)
		}
		j.keys = append(j.keys, key)
	}
	return j, nil
}

// Name implements Strategy.
func (j *JWT) Name() string { return "jwt" }

// Read decrypts the (possibly chunked) cookie: one decryption with the
// current secret, no I/O; older secrets are tried only when it fails.
func (j *JWT) Read(_ context.Context, r *http.Request) (*Session, bool, error) {
	raw := cookies.ReadChunked(r, j.name)
	if raw == "" {
		_, err := r.Cookie(j.name)
		return nil, err == nil, nil
	}
	var claims map[string]any
	err := jwt.ErrInvalid
	for _, key := range j.keys {
		if claims, err = key.Decode(raw, j.life.Now()); !errors.Is(err, jwt.ErrInvalid) {
			break
		}
	}
	if errors.Is(err, jwt.ErrInvalid) {
		return nil, true, nil
	}
	if err != nil {
		return nil, true, fmt.Errorf("decode session token: %w", err)
	}
	return &Session{
		User: User{
			ID:    claimString(claims, "sub"),
			Name:  claimPtr(claims, "name"),
			Email: claimPtr(claims, "email"),
			Image: claimPtr(claims, "picture"),
		},
		Expires: j.life.Now().Add(j.life.MaxAge),
		Claims:  claims,
	}, true, nil
}

// Refresh re-encodes the claims with a new exp under the current secret and
// re-sets the cookie(s), so a token read with an older secret is re-issued
// under the current one in the same response.
func (j *JWT) Refresh(_ context.Context, w http.ResponseWriter, r *http.Request, s *Session) error {
	return j.write(w, r, s.Claims)
}

// Create writes a token holding claims.
func (j *JWT) Create(_ context.Context, w http.ResponseWriter, r *http.Request, _ User, claims map[string]any) error {
	return j.write(w, r, claims)
}

func (j *JWT) write(w http.ResponseWriter, r *http.Request, claims map[string]any) error {
	now := j.life.Now()
	tok, err := j.keys[0].Encode(claims, j.life.MaxAge, now)
	if err != nil {
		return fmt.Errorf("encode session token: %w", err)
	}
	j.writer.SetChunked(w, r, j.name, tok, now.Add(j.life.MaxAge))
	return nil
}

// Destroy clears every chunk; there is nothing stored server-side.
func (j *JWT) Destroy(_ context.Context, w http.ResponseWriter, r *http.Request) error {
	j.Clear(w, r)
	return nil
}

// Clear implements Strategy.
func (j *JWT) Clear(w http.ResponseWriter, r *http.Request) {
	j.writer.ClearChunked(w, r, j.name)
}

// DefaultClaims is next-auth's token at sign-in: name, email, picture, sub.
func DefaultClaims(u User) map[string]any {
	return map[string]any{"name": u.Name, "email": u.Email, "picture": u.Image, "sub": u.ID}
}

func claimString(c map[string]any, k string) string {
	s, _ := c[k].(string)
	return s
}

func claimPtr(c map[string]any, k string) *string {
	s, ok := c[k].(string)
	if !ok {
		return nil
	}
	return &s
}
