// Package email is the mechanism behind e-mail (magic link) sign-in:
// address normalisation, verification tokens and links, SMTP delivery and
// the per-key rate limits that keep the endpoint from being used to spam.
// It knows nothing about HTTP handlers or storage.
package email

import (
	"errors"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/latchkey-auth/latchkey/app/config/weborigin"
)

// ErrInvalidAddress is returned by Normalize for input that is not one
// plausible e-mail address.
var ErrInvalidAddress = errors.New("invalid e-mail address")

// maxAddressLen is RFC 5321's practical limit on a forward path.
const maxAddressLen = 320

// Normalize applies next-auth v4's default normalizeIdentifier, so the same
// address yields the same user in both: NFKC, trim, exactly one "@" and no
// '"', lower-case, the domain cut at the first ",", and a domain with a dot
// (user@localhost is rejected). Beyond v4 it also rejects whitespace and
// control characters inside the address and over-long input, which would
// otherwise reach the SMTP envelope and the database, and input that is not
// UTF-8: lower-casing turns each bad byte into U+FFFD, so %fe@x and %ff@x
// would silently become one address that no one typed. And it rejects
// what the mailer would deliver elsewhere (deliveredAsIs).
func Normalize(raw string) (string, error) {
	if !utf8.ValidString(raw) {
		return "", ErrInvalidAddress
	}
	s := strings.TrimSpace(norm.NFKC.String(raw))
	if strings.Count(s, "@") != 1 || strings.Contains(s, `"`) || len(s) > maxAddressLen {
		return "", ErrInvalidAddress
	}
	local, domain, _ := strings.Cut(strings.ToLower(s), "@")
	if local == "" || domain == "" {
		return "", ErrInvalidAddress
	}
	domain, _, _ = strings.Cut(domain, ",")
	if !strings.Contains(domain, ".") {
		return "", ErrInvalidAddress
	}
	addr := local + "@" + domain
	if strings.IndexFunc(addr, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", ErrInvalidAddress
	}
	if !deliveredAsIs(addr) {
		return "", ErrInvalidAddress
	}
	return addr, nil
}

// deliveredAsIs reports whether the mailer (go-mail, through net/mail)
// reads addr as exactly that address. RFC 5322 lets "x<bob@example.com>",
// "bob@example.com(1)" or "x:bob@example.com;" name bob@example.com: each
// would be its own account and its own per-address rate-limit budget,
// all mailed to one inbox. An address the mailer cannot read at all
// ("bob@example.com.") would fail only after its link was stored.
func deliveredAsIs(addr string) bool {
	a, err := mail.ParseAddress(addr)
	return err == nil && a.Name == "" && a.Address == addr
}

// Comparable is addr as the configured lists of addresses and domains
// (access rules, allowed_email_domains, group rules,
// two_factor.required_for) compare it: lower-case, its domain in ASCII as
// new URL() writes a host (x@Bücher.example is x@xn--bcher-kva.example),
// the form config writes those lists in. One mailbox is then one entry
// whichever way a provider, a user or an operator spelled its domain.
// ok is false when addr has no "@" or its domain is no valid name: such
// an address matches no entry (callers fail closed). The stored address
// stays as it was written (next-auth's normalizeIdentifier keeps Unicode).
func Comparable(addr string) (string, bool) {
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 {
		return "", false
	}
	domain, err := weborigin.ASCIIHost(addr[at+1:])
	if err != nil {
		return "", false
	}
	return strings.ToLower(addr[:at]) + "@" + domain, true
}
