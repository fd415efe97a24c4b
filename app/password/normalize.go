package password

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxInputBytes bounds a password before anything else looks at it. The
// policy allows 128 characters; NFKC and multi-byte UTF-8 make that up to
// a few hundred bytes, so 1 KiB refuses nothing legitimate while keeping a
// 1 MB body from reaching NFKC or Argon2.
const MaxInputBytes = 1024

// Refusal is a password this package refuses. Its text is a sentence
// written for the user (which is why it is not a plain errors.New: Go
// error strings are not sentences); ID names the same sentence in the
// pages' message catalogues (views/locales), which show it translated.
type Refusal struct{ id, msg string }

func (r *Refusal) Error() string { return r.msg }

// ID is the refusal's message id in the catalogues.
func (r *Refusal) ID() string { return r.id }

// Input errors: the password could not be read at all.
var (
	ErrEmpty       = &Refusal{"PasswordEmpty", "Enter a password."}
	ErrInputTooBig = &Refusal{"PasswordInputTooBig", "The password is too long."}
	ErrInvalidUTF8 = &Refusal{"PasswordInvalidUTF8", "The password contains bytes that are not valid text (UTF-8)."}
	ErrNUL         = &Refusal{"PasswordNUL", "The password must not contain a NUL character."}
)

// Normalize checks raw is a readable password and returns its NFKC form,
// the form that is hashed and measured. The checks are cheap and run in
// this order: empty, over MaxInputBytes, invalid UTF-8, NUL.
func Normalize(raw string) (string, error) {
	switch {
	case raw == "":
		return "", ErrEmpty
	case len(raw) > MaxInputBytes:
		return "", ErrInputTooBig
	case !utf8.ValidString(raw):
		return "", ErrInvalidUTF8
	case strings.IndexByte(raw, 0) >= 0:
		return "", ErrNUL
	}
	return norm.NFKC.String(raw), nil
}
