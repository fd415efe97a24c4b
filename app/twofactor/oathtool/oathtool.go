// Package oathtool gives tests authenticator codes from Debian's oathtool
// (install.sh installs it), an RFC 6238 implementation independent of the
// one latchkey uses, so a test proves latchkey agrees with a real
// authenticator rather than with itself.
package oathtool

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Code is the six-digit TOTP code of the base32 secret at t (SHA-1, 30 s).
func Code(t testing.TB, secret string, at time.Time) string {
	t.Helper()
	out, err := exec.Command("oathtool", "--totp", "--base32", "--now", "@"+strconv.FormatInt(at.Unix(), 10), secret).Output()
	if err != nil {
		t.Fatalf("oathtool (app/twofactor/oathtool/install.sh installs it): %v", err)
	}
	return strings.TrimSpace(string(out))
}
