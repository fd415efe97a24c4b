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
	claims, _, err := k.DecodePayload(token, now)
	return claims, err
}

// DecodePayload is Decode that also returns the payload: the JSON text the
// claims were read from. SameClaims compares claims with it, so a caller
// can tell whether re-encoding would change what the token holds.
//
// A token carrying exactly the protected header Encode writes for one of
// the key's encs (the header next-auth and @auth/core write too) skips
// header parsing: that header is known to be "dir", a permitted enc, the
// right kid, no "zip" or "crit". Every other header goes through go-jose's
// parser and the checks below, as before. Either way the AEAD check, the
// IV and tag lengths and every claims check run.
func (k *Key) DecodePayload(token string, now time.Time) (map[string]any, string, error) {
	if k == nil || k.seal == nil {
		return nil, "", errUninitialised
	}
	seg, ok := splitCompact(token)
	if !ok {
		return nil, "", errNotCompact
	}
	w := k.work()
	defer k.done(w)
	var plaintext []byte
	if ck := k.ours(seg.header); ck != nil {
		if len(seg.iv) != encodedLen(ck.ivLen) || len(seg.tag) != encodedLen(ck.tagLen) {
			return nil, "", errIVOrTag
		}
		p, err := ck.open(w, seg)
		if err != nil {
			return nil, "", err
		}
		plaintext = p
	} else {
		obj, err := jose.ParseEncryptedCompact(token, dirOnly, k.encs)
		if err != nil {
			return nil, "", errHeader
		}
		ck, err := k.contentKeyFor(obj, seg)
		if err != nil {
			return nil, "", err
		}
		if plaintext, err = obj.Decrypt(ck.raw); err != nil {
			return nil, "", errDecrypt
		}
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
	switch jose.ContentEncryption(enc) {
	case jose.A256GCM:
		ck = k.gcm
	case jose.A256CBC_HS512:
		ck = k.cbc
	}
	if ck == nil {
		return nil, invalid("unsupported enc")
	}
	if len(seg.iv) != encodedLen(ck.ivLen) || len(seg.tag) != encodedLen(ck.tagLen) {
		return nil, errIVOrTag
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
//
// The payload is copied into one string, which it returns; the claims'
// keys and strings are parts of it (parseObject), or, for the JSON that
// parser leaves to encoding/json, json.Unmarshal's own.
func parseClaims(plaintext []byte, now time.Time) (map[string]any, string, error) {
	if !utf8.Valid(plaintext) {
		return nil, "", errNotUTF8
	}
	payload := string(plaintext)
	claims, ok := parseObject(payload)
	if !ok {
		claims = nil
		if err := json.Unmarshal(plaintext, &claims); err != nil || claims == nil {
			return nil, "", errNotObject
		}
	}
	if err := CheckTimes(claims, now); err != nil {
		return nil, "", err
	}
	return claims, payload, nil
}

// CheckTimes is the decoders' check of a payload's time claims at now: iat
// a number when present, nbf (a number) reached and exp (a number, always
// present) not passed, each with the clock tolerance. A caller that keeps
// decoded claims runs it again whenever it uses them later.
func CheckTimes(claims map[string]any, now time.Time) error {
	t := float64(now.Unix())
	if v, ok := claims["iat"]; ok {
		if _, num := v.(float64); !num {
			return errIat
		}
	}
	if v, ok := claims["nbf"]; ok {
		nbf, num := v.(float64)
		if !num {
			return errNbf
		}
		if nbf > t+clockTolerance {
			return errNotYetValid
		}
	}
	exp, num := claims["exp"].(float64)
	if !num {
		return errExp
	}
	if exp <= t-clockTolerance {
		return ErrExpired
	}
	return nil
}

// SameClaims reports whether claims are exactly what payload (from
// DecodePayload) holds: whether they serialize, as Encode writes them, to
// payload byte for byte. JSON read back from that text is the same claims,
// so true means re-encoding would change nothing but iat, exp and jti. It
// is false for a payload written elsewhere (next-auth's key order, spacing),
// and for claims holding a value Encode leaves to encoding/json; callers
// that re-issue on false are then merely doing so once more than needed.
func (k *Key) SameClaims(claims map[string]any, payload string) bool {
	if k == nil || claims == nil {
		return false
	}
	w := k.work()
	defer k.done(w)
	w.json.buf = w.json.buf[:0]
	return w.json.appendClaims(claims, nil) && string(w.json.buf) == payload
}
