package email

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	ok := []struct{ in, want string }{
		{"alice@example.com", "alice@example.com"},
		{"  Alice@Example.COM\t\n", "alice@example.com"},
		{"bob@example.com,evil.com", "bob@example.com"},        // v4 strips the domain after ","
		{"bob@example.com,", "bob@example.com"},                //
		{"ｂｏｂ@ｅｘａｍｐｌｅ．ｃｏｍ", "bob@example.com"},                 // NFKC folds full-width forms
		{"o\u0301la@example.com", "\u00f3la@example.com"},      // NFKC composes
		{"a+tag@sub.example.co.uk", "a+tag@sub.example.co.uk"}, //
		{"ÄRGER@Beispiel.de", "ärger@beispiel.de"},             // Unicode lower-casing
		{"x@a.b", "x@a.b"},
	}
	for _, tc := range ok {
		got, err := Normalize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	bad := []string{
		"",
		"   ",
		"alice",
		"alice@localhost",       // no dot in the domain
		"@example.com",          // empty local part
		"alice@",                // empty domain
		"a@b@example.com",       // two @
		`"a b"@example.com`,     // quotes
		"alice@,example.com",    // domain empty after ","
		"ali ce@example.com",    // inner space
		"alice@exa\r\nmple.com", // header injection attempt
		"alice@example.com\x00", // control character (TrimSpace keeps NUL)
		"\x00alice@example.com", //
		"\xff@example.com",      // not UTF-8: lower-casing would make it U+FFFD
		"alice@exa\xfemple.com", //
		"\xc3@example.com",      // a cut multi-byte sequence
		"ali\u0007ce@example.com",
		strings.Repeat("a", 320) + "@example.com",
		// RFC 5322 forms the mailer reads as another address: the link
		// would go to bob@example.com while the account, and the
		// per-address rate limits, key on the text typed.
		"x<bob@example.com>",
		"<bob@example.com>",
		"bob@example.com(1)",
		"(1)bob@example.com",
		"x:bob@example.com;",
		"bob@example.com.", // the mailer refuses it: refused before anything is stored
	}
	for _, in := range bad {
		if got, err := Normalize(in); !errors.Is(err, ErrInvalidAddress) {
			t.Errorf("Normalize(%q) = %q, %v; want ErrInvalidAddress", in, got, err)
		}
	}
}

// Comparable writes the domain as config writes the lists' (ASCII, xn--),
// so either spelling of one mailbox is one entry; an address whose domain
// is no name compares with nothing.
func TestComparable(t *testing.T) {
	for in, want := range map[string]string{
		"Ada@Example.COM":                 "ada@example.com",
		"ada@Bücher.example":              "ada@xn--bcher-kva.example",
		"ada@xn--BCHER-kva.example":       "ada@xn--bcher-kva.example",
		"Ärger@bücher．example":            "ärger@xn--bcher-kva.example",
		"a@b@ｅｘａｍｐｌｅ.com":                 "a@b@example.com",
		"ada@sub.bücher.example.evil.net": "ada@sub.xn--bcher-kva.example.evil.net",
	} {
		got, ok := Comparable(in)
		if !ok || got != want {
			t.Errorf("Comparable(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "ada", "@example.com", "ada@", "ada@xn--zz.example", "ada@a\u200db.example", "ada@exa mple.com", "ada@a/b.example"} {
		if got, ok := Comparable(in); ok {
			t.Errorf("Comparable(%q) = %q, true; want no match", in, got)
		}
	}
}
