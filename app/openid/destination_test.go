package openid_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/openid"
)

// The consent page names a native app's scheme as it names a web app's
// host, never a private-use URI's authority, and nothing for junk.
func TestDestination(t *testing.T) {
	for uri, want := range map[string]string{
		"https://app.example.com/cb":        "app.example.com",
		"http://127.0.0.1:9/native":         "127.0.0.1:9",
		"com.example.app:/oauth2redirect":   "com.example.app",
		"Com.Example.App:/cb":               "com.example.app",
		"com.example.app://evil.example/cb": "com.example.app",
		"%zz":                               "",
	} {
		require.Equal(t, want, openid.Destination(uri), uri)
	}
}
