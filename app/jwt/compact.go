package jwt

// segments are the five parts of a compact JWE, still base64url-encoded.
type segments struct {
	header, encryptedKey, iv, ciphertext, tag string
}

// b64val maps a base64url character to its 6-bit value, or -1.
var b64val = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range len(alphabet) {
		t[alphabet[i]] = int8(i)
	}
	return t
}()

// splitCompact does the cheap structural checks before any base64 or JSON
// work, so junk on the hottest route is refused in one linear scan:
// size, exactly five parts, only unpadded base64url characters (Go's decoder
// would silently skip CR/LF), canonical encodings (so a changed character
// always means changed bytes: a token string has exactly one decoding), and
// an empty encrypted-key part, which "dir" requires (jose refuses one too;
// go-jose would ignore it).
func splitCompact(token string) (segments, bool) {
	var s segments
	if len(token) == 0 || len(token) > maxTokenLen {
		return s, false
	}
	var dots [4]int
	n := 0
	for i := 0; i < len(token); i++ {
		c := token[i]
		if c == '.' {
			if n == len(dots) {
				return s, false
			}
			dots[n] = i
			n++
			continue
		}
		if b64val[c] < 0 {
			return s, false
		}
	}
	if n != len(dots) {
		return s, false
	}
	s.header = token[:dots[0]]
	s.encryptedKey = token[dots[0]+1 : dots[1]]
	s.iv = token[dots[1]+1 : dots[2]]
	s.ciphertext = token[dots[2]+1 : dots[3]]
	s.tag = token[dots[3]+1:]
	if s.header == "" || len(s.header) > maxHeaderLen || s.encryptedKey != "" {
		return s, false
	}
	for _, p := range [...]string{s.header, s.iv, s.ciphertext, s.tag} {
		if !canonical(p) {
			return s, false
		}
	}
	return s, true
}

// canonical reports whether an unpadded base64url string (alphabet already
// checked) has a valid length and zero unused bits in its last character.
func canonical(p string) bool {
	switch len(p) % 4 {
	case 0:
		return true
	case 2:
		return b64val[p[len(p)-1]]&0x0f == 0
	case 3:
		return b64val[p[len(p)-1]]&0x03 == 0
	}
	return false
}

// encodedLen is the unpadded base64url length of n bytes.
func encodedLen(n int) int { return (n*8 + 5) / 6 }
