package password

import (
	_ "embed"
	"strings"
	"unicode/utf8"
)

// Policy errors: the password is readable but not acceptable as a new
// password.
var (
	ErrTooShort    = &Refusal{"PasswordTooShort", "The password must be at least 8 characters long."}
	ErrTooLong     = &Refusal{"PasswordTooLong", "The password must be at most 128 characters long."}
	ErrCommon      = &Refusal{"PasswordCommon", "This password is one of the most commonly used passwords. Choose another."}
	ErrEqualsEmail = &Refusal{"PasswordEqualsEmail", "The password must not be your e-mail address."}
)

// Length bounds in characters (runes after NFKC), per NIST SP 800-63B
// §5.1.1.2: at least 8, and verifiers should accept at least 64; 128 keeps
// the hashing input small.
const (
	MinRunes = 8
	MaxRunes = 128
)

// commonList is the passwords frequency list of zxcvbn 4.4.2 (MIT, Dropbox;
// see README.md beside it), lower-cased, keeping the 11,611 entries of 8
// or more characters (shorter ones are refused by length anyway).
//
//go:embed common-passwords.txt
var commonList string

// Policy checks a new password against NIST SP 800-63B §5.1.1.2: 8–128
// characters after NFKC, any characters (spaces, emoji, any script), no
// composition rules, not one of the most common passwords, and not the
// account's own e-mail address or its local part. Checks compare
// lower-cased, so "PassWord1" is as common as "password1".
//
// The list is searched where it is embedded, one line per entry, rather
// than loaded into a set: a set of 11,611 strings is about half a
// megabyte of heap that every garbage collection of a running service
// marks, for a look-up that only setting a password makes (a search of
// the 100 KB takes microseconds; hashing the password, milliseconds).
type Policy struct{}

// NewPolicy is the policy; it is read-only, safe for concurrent use.
func NewPolicy() *Policy { return &Policy{} }

// CommonCount is how many passwords the policy refuses as common.
func (p *Policy) CommonCount() int { return strings.Count(commonList, "\n") }

// isCommon reports whether lower (lower-cased) is a whole line of the
// list. A line holds no newline, so neither can an entry.
func isCommon(lower string) bool {
	if strings.IndexByte(lower, '\n') >= 0 {
		return false
	}
	// commonList ends with a newline; its first line has none before it.
	return strings.HasPrefix(commonList, lower+"\n") || strings.Contains(commonList, "\n"+lower+"\n")
}

// Check returns nil when pw is acceptable as a new password for the
// account with the given e-mail address (may be empty), else the first
// rule it breaks: an input error of Normalize, ErrTooShort, ErrTooLong,
// ErrEqualsEmail or ErrCommon.
func (p *Policy) Check(pw, email string) error {
	n, err := Normalize(pw)
	if err != nil {
		return err
	}
	switch runes := utf8.RuneCountInString(n); {
	case runes < MinRunes:
		return ErrTooShort
	case runes > MaxRunes:
		return ErrTooLong
	}
	lower := strings.ToLower(n)
	if email = strings.ToLower(strings.TrimSpace(email)); email != "" {
		local, _, _ := strings.Cut(email, "@")
		if lower == email || lower == local {
			return ErrEqualsEmail
		}
	}
	if isCommon(lower) {
		return ErrCommon
	}
	return nil
}
