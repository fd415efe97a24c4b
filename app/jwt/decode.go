package jwt

import (
	"encoding/base64"
	"encoding/json"
	"time"
	"unicode/utf8"

	jose "github.com/go-jose/go-jose/v4"
)

var dirOnly = []jose.KeyAlgorithm{jose.DIRECT}

// Decode decrypts token and validates its time claims against now, the way
// next-auth's and @auth/core's decode (jose jwtDecrypt, clockTolerance 15 s)
// do. Every failure wraps ErrInvalid (ErrExpired for expiry); error texts
// never contain token material.
//
// It is stricter than jose in ways no real token notices: only "dir" with
// the enc the libraries emit (A256GCM; V5 also A256CBC-HS512), exp is
// required, "zip" and "crit" are refused, base64url must be canonical, and
// IV and tag lengths must be exact.
func (k *Key) Decode(token string, now time.Time) (map[string]any, error) {
	if k == nil || k.encrypter == nil {
		return nil, invalid("key not initialised with NewKey")
	}
	seg, ok := splitCompact(token)
	if !ok {
		return nil, invalid("not a compact dir JWE")
	}
	obj, err := jose.ParseEncryptedCompact(token, dirOnly, k.encs)
	if err != nil {
		return nil, invalid("malformed or unsupported header")
	}
	ck, err := k.contentKeyFor(obj, seg)
	if err != nil {
		return nil, err
	}
	plaintext, err := obj.Decrypt(ck.raw)
	if err != nil {
		return nil, invalid("decryption failed")
	}
	return parseClaims(plaintext, now)
}

// contentKeyFor picks the key for the token's "enc" and checks everything
// go-jose leaves to us: kid (V5), compression, and exact IV and tag sizes.
func (k *Key) contentKeyFor(obj *jose.JSONWebEncryption, seg segments) (*contentKey, error) {
	h := obj.Header
	if _, zip := h.ExtraHeaders["zip"]; zip {
		return nil, invalid("compressed payload")
	}
	if _, crit := h.ExtraHeaders["crit"]; crit {
		return nil, invalid("critical header extension")
	}
	enc, _ := h.ExtraHeaders["enc"].(string)
	var ck *contentKey
	var ivLen, tagLen int
	switch jose.ContentEncryption(enc) {
	case jose.A256GCM:
		ck, ivLen, tagLen = k.gcm, 12, 16
	case jose.A256CBC_HS512:
		ck, ivLen, tagLen = k.cbc, 16, 32
	}
	if ck == nil {
		return nil, invalid("unsupported enc")
	}
	if len(seg.iv) != encodedLen(ivLen) || len(seg.tag) != encodedLen(tagLen) {
		return nil, invalid("bad iv or tag length")
	}
	if ck.kid != "" && !kidMatches(h.KeyID, ck.kid, seg.header) {
		return nil, invalid("kid mismatch")
	}
	return ck, nil
}

// kidMatches follows @auth/core: no kid at all is accepted; any kid present
// must equal the thumbprint. go-jose reports "kid":"" and "kid":null as
// absent, so when it saw no kid the header is re-read (a rare path: only
// tokens without a kid reach it).
func kidMatches(got, want, header string) bool {
	if got != "" {
		return got == want
	}
	raw, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	_, present := fields["kid"]
	return !present
}

// parseClaims checks the payload the way jose's JWT claims validation does:
// a UTF-8 JSON object whose iat, nbf and exp, when present, are numbers;
// nbf <= now+15 and exp > now-15. Unlike jose, exp is required: both
// libraries always set it, and a token that never expires is not one they
// would mint.
func parseClaims(plaintext []byte, now time.Time) (map[string]any, error) {
	if !utf8.Valid(plaintext) {
		return nil, invalid("payload is not UTF-8")
	}
	var claims map[string]any
	if err := json.Unmarshal(plaintext, &claims); err != nil || claims == nil {
		return nil, invalid("payload is not a JSON object")
	}
	t := float64(now.Unix())
	if v, ok := claims["iat"]; ok {
		if _, num := v.(float64); !num {
			return nil, invalid("iat is not a number")
		}
	}
	if v, ok := claims["nbf"]; ok {
		nbf, num := v.(float64)
		if !num {
			return nil, invalid("nbf is not a number")
		}
		if nbf > t+clockTolerance {
			return nil, invalid("not yet valid")
		}
	}
	exp, num := claims["exp"].(float64)
	if !num {
		return nil, invalid("exp missing or not a number")
	}
	if exp <= t-clockTolerance {
		return nil, ErrExpired
	}
	return claims, nil
}
