package app_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/stretchr/testify/require"
)

// softKey is a software authenticator, as a browser's platform
// authenticator would answer navigator.credentials: one ES256 key pair
// for one discoverable credential, with its signature counter and flags.
// Tests turn its knobs (origin, RP id, user handle, counter) to forge what
// an attacker or a cloned key would send.
type softKey struct {
	t          testing.TB
	priv       *ecdsa.PrivateKey
	credID     []byte
	userHandle []byte   // set at registration from the options' user.id
	count      uint32   // the counter the next assertion reports (then +1)
	origin     string   // clientDataJSON.origin
	rpID       string   // hashed into authenticatorData
	packed     bool     // packed self attestation instead of none
	synced     bool     // BE and BS flags: a synced passkey
	noUV       bool     // no UV flag: the key was used without its PIN or biometric
	transports []string // the browser's getTransports(); nil: internal
}

func newSoftKey(t testing.TB, origin, rpID string) *softKey {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	return &softKey{t: t, priv: priv, credID: id, origin: origin, rpID: rpID, count: 1}
}

var b64 = base64.RawURLEncoding

// flags are the authenticatorData flags: UP, UV, BE/BS, AT when attested.
func (k *softKey) flags(attested bool) byte {
	f := byte(0x01 | 0x04)
	if k.noUV {
		f &^= 0x04
	}
	if k.synced {
		f |= 0x08 | 0x10
	}
	if attested {
		f |= 0x40
	}
	return f
}

// authData is rpIdHash | flags | counter [| attested credential data].
func (k *softKey) authData(attested bool) []byte {
	h := sha256.Sum256([]byte(k.rpID))
	out := append([]byte{}, h[:]...)
	out = append(out, k.flags(attested))
	out = binary.BigEndian.AppendUint32(out, k.count)
	if attested {
		out = append(out, make([]byte, 16)...) // AAGUID: zero
		out = binary.BigEndian.AppendUint16(out, uint16(len(k.credID)))
		out = append(out, k.credID...)
		pub, err := webauthncbor.Marshal(map[int]any{
			1: 2, 3: -7, -1: 1,
			-2: k.priv.X.FillBytes(make([]byte, 32)),
			-3: k.priv.Y.FillBytes(make([]byte, 32)),
		})
		require.NoError(k.t, err)
		out = append(out, pub...)
	}
	return out
}

func (k *softKey) clientData(typ, challenge string) []byte {
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": k.origin, "crossOrigin": false})
	require.NoError(k.t, err)
	return b
}

func (k *softKey) sign(authData, clientData []byte) []byte {
	cdh := sha256.Sum256(clientData)
	digest := sha256.Sum256(append(append([]byte{}, authData...), cdh[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, digest[:])
	require.NoError(k.t, err)
	return sig
}

// create answers registration options (GET /webauthn-options ... register)
// with the PublicKeyCredential JSON a browser posts.
func (k *softKey) create(options map[string]any) string {
	challenge := options["challenge"].(string)
	user := options["user"].(map[string]any)
	uh, err := b64.DecodeString(user["id"].(string))
	require.NoError(k.t, err)
	k.userHandle = uh
	ad := k.authData(true)
	cd := k.clientData("webauthn.create", challenge)
	att := map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad}
	if k.packed {
		att["fmt"] = "packed"
		att["attStmt"] = map[string]any{"alg": -7, "sig": k.sign(ad, cd)}
	}
	ao, err := webauthncbor.Marshal(att)
	require.NoError(k.t, err)
	k.count++
	transports := k.transports
	if transports == nil {
		transports = []string{"internal"}
	}
	return k.marshal(map[string]any{
		"clientDataJSON": b64.EncodeToString(cd), "attestationObject": b64.EncodeToString(ao), "transports": transports,
	})
}

// get answers sign-in options with an assertion; the counter then moves on.
func (k *softKey) get(options map[string]any) string {
	ad := k.authData(false)
	cd := k.clientData("webauthn.get", options["challenge"].(string))
	out := k.marshal(map[string]any{
		"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(ad),
		"signature": b64.EncodeToString(k.sign(ad, cd)), "userHandle": b64.EncodeToString(k.userHandle),
	})
	k.count++
	return out
}

func (k *softKey) marshal(response map[string]any) string {
	b, err := json.Marshal(map[string]any{
		"id": b64.EncodeToString(k.credID), "rawId": b64.EncodeToString(k.credID), "type": "public-key",
		"response": response, "authenticatorAttachment": "platform", "clientExtensionResults": map[string]any{},
	})
	require.NoError(k.t, err)
	return string(b)
}
