package jwt

import (
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"

	jose "github.com/go-jose/go-jose/v4"
)

// Key holds the content-encryption keys derived from one (secret, salt,
// format). HKDF runs once in NewKey, so Encode and Decode only do the JWE
// work. A Key is immutable and safe for concurrent use.
type Key struct {
	format Format
	// encrypter is built once; go-jose's dir encrypter keeps no per-call
	// state (the race test exercises concurrent Encode).
	encrypter jose.Encrypter
	// Decryption candidates by "enc". A nil entry means that enc is refused.
	gcm *contentKey // A256GCM: V4's only enc; accepted by V5 decode like @auth/core
	cbc *contentKey // A256CBC-HS512: V5 only
	// encs is the allow-list handed to go-jose's parser.
	encs []jose.ContentEncryption
}

// contentKey is one derived key and the "kid" a token using it must carry,
// if it carries one. An empty kid means the header kid is not checked (V4,
// where next-auth ignores it).
type contentKey struct {
	raw []byte
	kid string
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
		k.gcm = &contentKey{raw: raw}
		k.encs = []jose.ContentEncryption{jose.A256GCM}
		k.encrypter, err = newEncrypter(jose.A256GCM, raw, "")
		if err != nil {
			return nil, err
		}
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
		k.cbc = &contentKey{raw: cbcRaw, kid: thumbprint(cbcRaw)}
		k.gcm = &contentKey{raw: gcmRaw, kid: thumbprint(gcmRaw)}
		k.encs = []jose.ContentEncryption{jose.A256CBC_HS512, jose.A256GCM}
		k.encrypter, err = newEncrypter(jose.A256CBC_HS512, cbcRaw, k.cbc.kid)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("jwt: unknown format %d", int(format))
	}
	return k, nil
}

// Format reports the dialect the key encodes.
func (k *Key) Format() Format { return k.format }

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

func newEncrypter(enc jose.ContentEncryption, raw []byte, kid string) (jose.Encrypter, error) {
	e, err := jose.NewEncrypter(enc, jose.Recipient{Algorithm: jose.DIRECT, Key: raw, KeyID: kid}, nil)
	if err != nil {
		return nil, fmt.Errorf("jwt: encrypter: %w", err)
	}
	return e, nil
}
