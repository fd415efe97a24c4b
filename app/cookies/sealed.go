package cookies

import (
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/securecookie"
)

// SealedCodecs returns the gorilla/securecookie codecs of a latchkey-private
// cookie (one with no next-auth counterpart): one per secret, the first
// sealing and every one opening, so secret rotation needs nothing more.
// Each secret gives a 64-byte HMAC-SHA256 key and a 32-byte AES-256 key by
// HKDF-SHA256 with info strings made from purpose, so no two cookies — nor
// anything else derived from the secret — share keys. Values are JSON and
// a value sealed longer than maxAge ago is refused.
func SealedCodecs(secrets []string, purpose string, maxAge time.Duration) ([]securecookie.Codec, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%s: no secret", purpose)
	}
	if purpose == "" {
		return nil, errors.New("sealed cookie: no purpose")
	}
	pairs := make([][]byte, 0, 2*len(secrets))
	for _, s := range secrets {
		hashKey, err := hkdf.Key(sha256.New, []byte(s), nil, purpose+": HMAC-SHA256 key", 64)
		if err != nil {
			return nil, fmt.Errorf("%s key: %w", purpose, err)
		}
		blockKey, err := hkdf.Key(sha256.New, []byte(s), nil, purpose+": AES-256 key", 32)
		if err != nil {
			return nil, fmt.Errorf("%s key: %w", purpose, err)
		}
		pairs = append(pairs, hashKey, blockKey)
	}
	codecs := securecookie.CodecsFromPairs(pairs...)
	for _, c := range codecs {
		sc := c.(*securecookie.SecureCookie)
		sc.SetSerializer(securecookie.JSONEncoder{})
		sc.MaxAge(int(maxAge / time.Second))
	}
	return codecs, nil
}
