package signin

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestPasskeyName: the stored name is the user's, tidied: white space
// collapsed, control characters dropped, bytes that are not UTF-8 shown
// as U+FFFD, at most 64 characters; an empty one is "Passkey" and the
// date.
func TestPasskeyName(t *testing.T) {
	now := time.Date(2026, 11, 29, 23, 30, 0, 0, time.FixedZone("x", -3600))
	for in, want := range map[string]string{
		"  My   laptop ":                 "My laptop",
		"Work\tphone\n":                  "Work phone",
		"Yubi\x00key":                    "Yubikey",
		"a\x1b[31mred\x7f\u0085":         "a[31mred",
		"caf\xe9":                        "caf\uFFFD",
		"\xff\xfe":                       "\uFFFD",
		"Schlüssel 🔑":                    "Schlüssel 🔑",
		"\x00\x01":                       "Passkey 2026-11-30",
		"":                               "Passkey 2026-11-30",
		strings.Repeat("é", 70):          strings.Repeat("é", 64),
		strings.Repeat("\xff", 3) + "ok": "\uFFFDok",
	} {
		got := PasskeyName(in, now)
		if got != want {
			t.Errorf("PasskeyName(%q) = %q; want %q", in, got, want)
		}
		if !utf8.ValidString(got) || strings.ContainsRune(got, 0) {
			t.Errorf("PasskeyName(%q) = %q: not clean UTF-8", in, got)
		}
	}
}
