package email_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/email"
)

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"alice@example.com":         "a***@example.com",
		"a@example.com":             "a***@example.com",
		"Ünal.k@beispiel.de":        "Ü***@beispiel.de",
		`"odd@local"@example.com`:   "***@example.com",
		"no-at-sign":                "***",
		"@example.com":              "***",
		"":                          "***",
		"\xffbroken@example.com":    "***@example.com",
		"x+tag@sub.example.co.uk":   "x***@sub.example.co.uk",
		"bob@example.com@evil.test": "b***@evil.test",
	} {
		got := email.Mask(in)
		require.Equal(t, want, got, "Mask(%q)", in)
		if local, _, ok := cutLast(in); ok && len(local) > 1 {
			require.NotContains(t, got, local, "the local part of %q never appears", in)
		}
	}
}

func cutLast(addr string) (string, string, bool) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == '@' {
			return addr[:i], addr[i+1:], true
		}
	}
	return "", "", false
}
