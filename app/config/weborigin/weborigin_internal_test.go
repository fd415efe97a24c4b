package weborigin

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The shortcut for plain ASCII hosts answers as the full mapping does.
func TestPlainASCIIAgreesWithIDNA(t *testing.T) {
	pieces := []string{"a", "Z", "0", "9", ".", "-", "xn--", "XN--", "x", "n", "--", "ab", "com"}
	r := rand.New(rand.NewPCG(3, 4))
	taken := 0
	for range 50000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		host := b.String()
		fast, ok := plainASCII(host)
		if !ok {
			continue
		}
		taken++
		if slow, err := idnaHost(host); err != nil || slow != fast {
			t.Fatalf("%q: shortcut %q, full mapping %q, %v", host, fast, slow, err)
		}
	}
	if taken < 10000 {
		t.Fatalf("the shortcut was only taken %d times", taken)
	}
}
