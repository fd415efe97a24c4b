package twofactor

import (
	"strings"
	"time"

	mail "github.com/latchkey-auth/latchkey/app/email"
)

// Mode is two_factor.mode.
type Mode string

// The modes: off (the default: no second factor anywhere), optional (users
// may enrol), required (everyone, or the listed addresses and domains,
// must have it before any session starts).
const (
	ModeOff      Mode = "off"
	ModeOptional Mode = "optional"
	ModeRequired Mode = "required"
)

// Policy is the operator's two-factor configuration, compiled.
type Policy struct {
	Mode Mode
	// RequiredFor narrows ModeRequired to these addresses and domains
	// (lower-case; a domain as "example.com"); empty: everyone.
	RequiredFor []string
	// RememberFor is how long "remember this device" lasts; 0: not offered.
	RememberFor time.Duration
}

// On reports whether second factors exist at all.
func (p Policy) On() bool { return p.Mode == ModeOptional || p.Mode == ModeRequired }

// Requires reports whether a user with this address (nil: none) must have
// a second factor. A user without an address is required only when
// everyone is.
func (p Policy) Requires(email *string) bool {
	if p.Mode != ModeRequired {
		return false
	}
	if len(p.RequiredFor) == 0 {
		return true
	}
	if email == nil {
		return false
	}
	// The domain in ASCII, as config writes the list's; an address whose
	// domain is no name cannot be told apart from a listed one: required.
	addr, ok := mail.Comparable(*email)
	if !ok {
		return true
	}
	domain := addr[strings.LastIndexByte(addr, '@')+1:]
	for _, r := range p.RequiredFor {
		if r == addr || r == domain {
			return true
		}
	}
	return false
}
