package jwt

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"
)

// Encode returns a compact JWE of claims, stamped as next-auth does on every
// encode: iat = now, exp = now + maxAge (whole seconds) and a fresh UUID v4
// jti, overwriting any the caller passed. claims itself is not modified.
//
// The payload is the JSON json.Encoder writes with HTML escaping off (as
// JSON.stringify: no \u003c for <), keys sorted; appendClaims writes it
// without reflection for the value types claims hold, encoding/json any
// other.
func (k *Key) Encode(claims map[string]any, maxAge time.Duration, now time.Time) (string, error) {
	if k == nil || k.seal == nil {
		return "", errors.New("jwt: key not initialised with NewKey")
	}
	st := stamp{iat: now.Unix()}
	st.exp = st.iat + int64(maxAge/time.Second)
	newJTI(&st.jti)

	w := k.work()
	defer k.done(w)
	w.json.buf = w.json.buf[:0]
	if !w.json.appendClaims(claims, &st) {
		c := make(map[string]any, len(claims)+3)
		maps.Copy(c, claims)
		c["iat"], c["exp"], c["jti"] = st.iat, st.exp, string(st.jti[:])
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c); err != nil {
			return "", fmt.Errorf("jwt: marshal claims: %w", err)
		}
		w.json.buf = append(w.json.buf[:0], bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	}
	return k.seal.seal(w, w.json.buf), nil
}

// newJTI writes a random (version 4, RFC 9562) UUID in its 36-character
// form, as next-auth's uuid() does.
func newJTI(dst *[36]byte) {
	var u [16]byte
	// crypto/rand.Read never fails (Go 1.24+).
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant 10
	j := 0
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j], dst[j+1] = hexDigits[b>>4], hexDigits[b&0xf]
		j += 2
	}
}
