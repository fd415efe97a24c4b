package jwt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"
)

// Encode returns a compact JWE of claims, stamped as next-auth does on every
// encode: iat = now, exp = now + maxAge (whole seconds) and a fresh UUID v4
// jti, overwriting any the caller passed. claims itself is not modified.
func (k *Key) Encode(claims map[string]any, maxAge time.Duration, now time.Time) (string, error) {
	if k == nil || k.encrypter == nil {
		return "", errors.New("jwt: key not initialised with NewKey")
	}
	id, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("jwt: jti: %w", err)
	}
	c := make(map[string]any, len(claims)+3)
	maps.Copy(c, claims)
	iat := now.Unix()
	c["iat"] = iat
	c["exp"] = iat + int64(maxAge/time.Second)
	c["jti"] = id.String()

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// JSON.stringify does not escape <, > and &; keep payloads identical.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return "", fmt.Errorf("jwt: marshal claims: %w", err)
	}
	payload := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))

	obj, err := k.encrypter.Encrypt(payload)
	if err != nil {
		return "", fmt.Errorf("jwt: encrypt: %w", err)
	}
	tok, err := obj.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("jwt: serialize: %w", err)
	}
	return tok, nil
}
