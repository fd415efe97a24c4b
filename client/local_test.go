package client_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/cookies"
	"github.com/latchkey-auth/latchkey/app/jwt"
	"github.com/latchkey-auth/latchkey/client"
)

const (
	secret    = "client-test-secret-0123456789abcdef"
	oldSecret = "client-test-older-secret-0123456789ab"
)

// mint encodes a session token as latchkey (or next-auth) writes it for
// cookie name: v4 without salt, v5 salted with the name.
func mint(t *testing.T, secret, name string, format jwt.Format, claims map[string]any, life time.Duration, now time.Time) string {
	t.Helper()
	salt := ""
	if format == jwt.V5 {
		salt = name
	}
	key, err := jwt.NewKey(secret, salt, format)
	require.NoError(t, err)
	tok, err := key.Encode(claims, life, now)
	require.NoError(t, err)
	return tok
}

func requestWith(t *testing.T, cookieHeader string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, "http://app.example.com/", nil)
	require.NoError(t, err)
	if cookieHeader != "" {
		r.Header.Set("Cookie", cookieHeader)
	}
	return r
}

var claims = map[string]any{"sub": "u-1", "email": "ada@example.com", "name": "Ada", "picture": "https://img.example.com/ada.png"}

func TestLocalReadsBothFormatsUnderEveryName(t *testing.T) {
	now := time.Now()
	local, err := client.NewLocal(client.LocalOptions{Secrets: []string{secret}})
	require.NoError(t, err)
	cases := map[string]jwt.Format{
		"next-auth.session-token":          jwt.V4,
		"__Secure-next-auth.session-token": jwt.V4,
		"authjs.session-token":             jwt.V5,
		"__Secure-authjs.session-token":    jwt.V5,
	}
	for name, format := range cases {
		tok := mint(t, secret, name, format, claims, time.Hour, now)
		u, err := local.User(requestWith(t, "theme=dark; "+name+"="+tok))
		require.NoError(t, err)
		require.NotNil(t, u, name)
		require.Equal(t, client.User{ID: "u-1", Email: "ada@example.com", Name: "Ada", Image: "https://img.example.com/ada.png",
			Expires: time.Unix(now.Unix()+3600, 0)}, *u, name)
	}
	// A v5 token is salted with its cookie's name: under another name it is nobody.
	tok := mint(t, secret, "authjs.session-token", jwt.V5, claims, time.Hour, now)
	u, err := local.User(requestWith(t, "__Secure-authjs.session-token="+tok))
	require.NoError(t, err)
	require.Nil(t, u)
}

func TestLocalJoinsChunks(t *testing.T) {
	big := map[string]any{"sub": "u-2", "email": "big@example.com", "name": longName()}
	tok := mint(t, secret, "next-auth.session-token", jwt.V4, big, time.Hour, time.Now())
	require.Greater(t, len(tok), 2*cookies.ChunkSize)
	parts := []string{tok[:cookies.ChunkSize], tok[cookies.ChunkSize : 2*cookies.ChunkSize], tok[2*cookies.ChunkSize:]}
	// Out of order, as a browser may send them.
	header := "next-auth.session-token.2=" + parts[2] + "; next-auth.session-token.0=" + parts[0] + "; next-auth.session-token.1=" + parts[1]
	local, err := client.NewLocal(client.LocalOptions{Secrets: []string{secret}})
	require.NoError(t, err)
	u, err := local.User(requestWith(t, header))
	require.NoError(t, err)
	require.NotNil(t, u)
	require.Equal(t, "big@example.com", u.Email)
	require.Equal(t, longName(), u.Name)
}

func longName() string {
	b := make([]byte, 9000)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return string(b)
}

func TestLocalAcceptsEveryRotationSecret(t *testing.T) {
	local, err := client.NewLocal(client.LocalOptions{Secrets: []string{secret, oldSecret}})
	require.NoError(t, err)
	for _, s := range []string{secret, oldSecret} {
		tok := mint(t, s, "next-auth.session-token", jwt.V4, claims, time.Hour, time.Now())
		u, err := local.User(requestWith(t, "next-auth.session-token="+tok))
		require.NoError(t, err)
		require.NotNil(t, u)
	}
	tok := mint(t, "some-other-secret-0123456789abcdef", "next-auth.session-token", jwt.V4, claims, time.Hour, time.Now())
	u, err := local.User(requestWith(t, "next-auth.session-token="+tok))
	require.NoError(t, err)
	require.Nil(t, u, "a token under a secret not listed is nobody")
}

func TestLocalRefusesExpiredForgedAndJunk(t *testing.T) {
	now := time.Now()
	local, err := client.NewLocal(client.LocalOptions{Secrets: []string{secret}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	valid := mint(t, secret, "next-auth.session-token", jwt.V4, claims, time.Hour, now)
	for what, value := range map[string]string{
		"expired":  mint(t, secret, "next-auth.session-token", jwt.V4, claims, time.Minute, now.Add(-2*time.Minute)),
		"tampered": valid[:len(valid)-4] + "AAAA",
		"junk":     "not.a.token.at.all",
		"empty":    "",
	} {
		u, err := local.User(requestWith(t, "next-auth.session-token="+value))
		require.NoError(t, err, what)
		require.Nil(t, u, what)
	}
	_, err = client.NewLocal(client.LocalOptions{})
	require.Error(t, err, "no secret")
}
