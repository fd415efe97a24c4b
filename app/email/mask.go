package email

import (
	"strings"
	"unicode/utf8"
)

// Mask is an e-mail address as logs may show it: the first character of
// the local part, then "***", then the domain ("a***@example.com"). Enough
// to tell deliveries to different domains apart, never enough to name the
// person. A value without an "@" (or with nothing before it) is "***".
func Mask(addr string) string {
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 {
		return "***"
	}
	r, size := utf8.DecodeRuneInString(addr)
	if r == utf8.RuneError || r == '"' || r == '<' || size > at {
		return "***" + addr[at:]
	}
	return addr[:size] + "***" + addr[at:]
}
