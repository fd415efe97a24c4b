package session

import (
	"crypto/sha256"

	lru "github.com/hashicorp/golang-lru/v2"
)

// decodeCacheSize bounds the jwt strategy's decode cache: 4096 tokens'
// claims, about a kilobyte each. More browsers than that active at once
// only cost more decryptions.
const decodeCacheSize = 4096

// decodeCache remembers what recently decrypted session tokens hold, keyed
// by the token's SHA-256, so a browser that sends the same token on every
// page load (and a proxy that asks forward-auth on every request) costs one
// hash and one lookup instead of a decryption and a JSON parse.
//
// Decoding is a pure function of the token and the keys, and the keys never
// change in a running process, so an entry never goes stale: only the time
// checks depend on when the token is used, and they run on every hit
// (jwt.CheckTimes), as does everything Read checks after decoding (the
// sign-in time, the absolute lifetime, revocations). Only tokens that
// decoded are kept; a forged or expired one is decrypted and refused every
// time, and an entry whose token has expired goes at its first refused hit.
// Every hit shares one claims map, so nothing may edit it: the
// strategy keeps the cache only WithFixedClaims (no hook of the embedder's
// can change claims), and Refresh copies the claims before it re-issues.
type decodeCache struct {
	tokens *lru.Cache[[sha256.Size]byte, decodedToken]
}

// decodedToken is what DecodePayload returned for a token, and which key
// (its index, for rotation) decrypted it.
type decodedToken struct {
	claims  map[string]any
	payload string
	key     int
}

// newDecodeCache returns an empty cache, or nil (no caching) if it cannot
// be made.
func newDecodeCache() *decodeCache {
	tokens, err := lru.New[[sha256.Size]byte, decodedToken](decodeCacheSize)
	if err != nil {
		return nil
	}
	return &decodeCache{tokens: tokens}
}
