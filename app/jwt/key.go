package jwt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"sync"

	jose "github.com/go-jose/go-jose/v4"
)

// Key holds the content-encryption keys derived from one (secret, salt,
// format), and everything derived from them that Encode and Decode would
// otherwise rebuild per token: HKDF, the AES key schedules, the GCM tables
// and the protected headers all happen once, in NewKey. A Key is immutable
// (its pools aside) and safe for concurrent use.
type Key struct {
	format Format
	// seal is the content key Encode uses: gcm for V4, cbc for V5. nil on
	// a Key not made by NewKey.
	seal *contentKey
	// Decryption candidates by "enc". A nil entry means that enc is refused.
	gcm *contentKey // A256GCM: V4's only enc; accepted by V5 decode like @auth/core
	cbc *contentKey // A256CBC-HS512: V5 only
	// encs is the allow-list handed to go-jose's parser for the tokens
	// that do not carry one of our own headers (see Decode).
	encs []jose.ContentEncryption
	// scratch holds *work: buffers reused across calls, so a token costs
	// no allocation beyond its result.
	scratch sync.Pool
}

// contentKey is one derived key, the "kid" a token using it must carry, if
// it carries one (empty: the header kid is not checked: V4, where next-auth
// ignores it), and its ready-made cipher.
type contentKey struct {
	raw []byte
	kid string
	// header is the protected header Encode writes with this key, already
	// base64url-encoded; it is also the AEAD's additional data (aad). A
	// token whose header segment is exactly this needs no header parsing.
	header string
	aad    []byte
	ivLen  int
	tagLen int
	aead   cipher.AEAD  // A256GCM
	block  cipher.Block // A256CBC-HS512: AES-256 with the key's second half
	macs   sync.Pool    // A256CBC-HS512: HMAC-SHA-512 keyed with the first half
}

// NewKey derives the key for one cookie. salt is the cookie name for V5 (and
// for v4 check cookies such as "next-auth.state"); "" is the v4 session
// cookie default.
func NewKey(secret, salt string, format Format) (*Key, error) {
	if secret == "" {
		return nil, errors.New("jwt: empty secret")
	}
	k := &Key{format: format}
	switch format {
	case V4:
		info := "NextAuth.js Generated Encryption Key"
		if salt != "" {
			info += " (" + salt + ")"
		}
		raw, err := deriveKey(secret, salt, info, 32)
		if err != nil {
			return nil, err
		}
		if k.gcm, err = newContentKey(jose.A256GCM, raw, ""); err != nil {
			return nil, err
		}
		k.seal = k.gcm
		k.encs = []jose.ContentEncryption{jose.A256GCM}
	case V5:
		if salt == "" {
			// @auth/core requires it: the salt is the cookie name.
			return nil, errors.New("jwt: V5 needs a salt (the cookie name)")
		}
		info := "Auth.js Generated Encryption Key (" + salt + ")"
		cbcRaw, err := deriveKey(secret, salt, info, 64)
		if err != nil {
			return nil, err
		}
		gcmRaw, err := deriveKey(secret, salt, info, 32)
		if err != nil {
			return nil, err
		}
		if k.cbc, err = newContentKey(jose.A256CBC_HS512, cbcRaw, thumbprint(cbcRaw)); err != nil {
			return nil, err
		}
		if k.gcm, err = newContentKey(jose.A256GCM, gcmRaw, thumbprint(gcmRaw)); err != nil {
			return nil, err
		}
		k.seal = k.cbc
		k.encs = []jose.ContentEncryption{jose.A256CBC_HS512, jose.A256GCM}
	default:
		return nil, fmt.Errorf("jwt: unknown format %d", int(format))
	}
	return k, nil
}

// newContentKey builds the cipher for raw and the header Encode writes:
// {"alg":"dir","enc":…} plus "kid" when there is one, in that order — the
// bytes go-jose wrote before (sorted keys) and @auth/core writes
// (setProtectedHeader({ alg, enc, kid })).
func newContentKey(enc jose.ContentEncryption, raw []byte, kid string) (*contentKey, error) {
	h := `{"alg":"dir","enc":"` + string(enc) + `"`
	if kid != "" {
		h += `,"kid":"` + kid + `"` // base64url: nothing to escape
	}
	h = base64.RawURLEncoding.EncodeToString([]byte(h + "}"))
	ck := &contentKey{raw: raw, kid: kid, header: h, aad: []byte(h)}
	switch enc {
	case jose.A256GCM:
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("jwt: cipher: %w", err)
		}
		if ck.aead, err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("jwt: cipher: %w", err)
		}
		ck.ivLen, ck.tagLen = 12, 16
	case jose.A256CBC_HS512:
		// RFC 7518 §5.2.2.1: MAC_KEY is the first half, ENC_KEY the second.
		macKey, encKey := raw[:32], raw[32:]
		block, err := aes.NewCipher(encKey)
		if err != nil {
			return nil, fmt.Errorf("jwt: cipher: %w", err)
		}
		ck.block = block
		ck.macs.New = func() any { return hmac.New(sha512.New, macKey) }
		ck.ivLen, ck.tagLen = 16, 32
	default:
		return nil, fmt.Errorf("jwt: unsupported enc %s", enc)
	}
	return ck, nil
}

// Format reports the dialect the key encodes.
func (k *Key) Format() Format { return k.format }

// ours returns the content key whose own header is exactly header, or nil.
func (k *Key) ours(header string) *contentKey {
	for _, ck := range [...]*contentKey{k.seal, k.gcm, k.cbc} {
		if ck != nil && header == ck.header {
			return ck
		}
	}
	return nil
}

// deriveKey is HKDF-SHA256 as both libraries call it (@panva/hkdf). An empty
// salt is passed as nil, which RFC 5869 defines as HashLen zero bytes.
func deriveKey(secret, salt, info string, n int) ([]byte, error) {
	var s []byte
	if salt != "" {
		s = []byte(salt)
	}
	raw, err := hkdf.Key(sha256.New, []byte(secret), s, info, n)
	if err != nil {
		return nil, fmt.Errorf("jwt: derive key: %w", err)
	}
	return raw, nil
}

// thumbprint is the RFC 7638 JWK thumbprint of an "oct" key, hashed with the
// SHA-2 variant matching the key size, as @auth/core computes its "kid"
// (`sha${byteLength << 3}`): SHA-512 for the 64-byte key, SHA-256 for 32.
func thumbprint(raw []byte) string {
	var h hash.Hash
	if len(raw) == 64 {
		h = sha512.New()
	} else {
		h = sha256.New()
	}
	// Members in lexicographic order, no whitespace (RFC 7638 §3).
	h.Write([]byte(`{"k":"` + base64.RawURLEncoding.EncodeToString(raw) + `","kty":"oct"}`))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}
