package jwt

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"slices"
)

// The JWE content encryption for "dir" tokens, written against crypto/cipher
// directly so that a token costs no allocation beyond its result: RFC 7516
// compact serialization, with the protected header segment (ASCII) as
// additional data; A256GCM (RFC 7518 §5.3) and A256CBC-HS512 (§5.2). The
// reference implementation in interop_test.go and the Node vectors check it.

// work is one call's scratch: buf for the cipher, out for the token text,
// json for the claims. Pooled per Key.
type work struct {
	buf, out []byte
	json     jsonWriter
}

// maxPooled keeps an unusually large buffer from staying in the pool.
const maxPooled = 64 << 10

func (k *Key) work() *work {
	if w, ok := k.scratch.Get().(*work); ok {
		return w
	}
	return new(work)
}

func (k *Key) done(w *work) {
	if cap(w.buf) > maxPooled || cap(w.out) > maxPooled || cap(w.json.buf) > maxPooled {
		return
	}
	w.buf, w.out, w.json.buf, w.json.keys = w.buf[:0], w.out[:0], w.json.buf[:0], w.json.keys[:0]
	k.scratch.Put(w)
}

// appendDecoded appends the bytes of the base64url segment s to b. The
// segment's characters are first copied into b's spare room (the decoder
// reads []byte), past where the bytes go.
func appendDecoded(b []byte, s string) ([]byte, bool) {
	enc := base64.RawURLEncoding
	n := enc.DecodedLen(len(s))
	b = slices.Grow(b, n+len(s))
	src := b[len(b)+n : len(b)+n+len(s)]
	copy(src, s)
	m, err := enc.Decode(b[len(b):len(b)+n], src)
	if err != nil {
		return b, false
	}
	return b[:len(b)+m], true
}

// open authenticates and decrypts seg, whose header segment is ck.header
// and whose IV and tag lengths are checked, into w.buf; the plaintext
// returned lives in w.buf.
func (ck *contentKey) open(w *work, seg segments) ([]byte, error) {
	b := w.buf[:0]
	var ok1, ok2, ok3 bool
	b, ok1 = appendDecoded(b, seg.iv)
	b, ok2 = appendDecoded(b, seg.ciphertext)
	b, ok3 = appendDecoded(b, seg.tag)
	w.buf = b
	if !ok1 || !ok2 || !ok3 {
		return nil, errMalformed
	}
	ctEnd := len(b) - ck.tagLen
	if ck.aead != nil {
		sealed := b[ck.ivLen:] // ciphertext || tag, as Open wants them
		plain, err := ck.aead.Open(sealed[:0], b[:ck.ivLen], sealed, ck.aad)
		if err != nil {
			return nil, errDecrypt
		}
		return plain, nil
	}
	// A256CBC-HS512: the tag is the first half of HMAC-SHA-512 over
	// AAD || IV || ciphertext || AL (the AAD's length in bits, 64-bit big
	// endian), checked in constant time before anything is decrypted.
	b = slices.Grow(b, 8+64)
	w.buf = b
	end := len(b)
	al := binary.BigEndian.AppendUint64(b[end:end], uint64(len(ck.aad))*8)
	mac := ck.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write(ck.aad)
	mac.Write(b[:ctEnd]) // IV || ciphertext
	mac.Write(al)
	sum := mac.Sum(b[end+8 : end+8])
	ck.macs.Put(mac)
	if subtle.ConstantTimeCompare(sum[:ck.tagLen], b[ctEnd:end]) != 1 {
		return nil, errDecrypt
	}
	ct := b[ck.ivLen:ctEnd]
	if len(ct) == 0 || len(ct)%16 != 0 {
		return nil, errDecrypt
	}
	// CBC, in place: each block is decrypted, then XORed with the ciphertext
	// block before it (the IV for the first).
	var prev, cur [16]byte
	copy(prev[:], b[:16])
	for off := 0; off < len(ct); off += 16 {
		blk := ct[off : off+16]
		copy(cur[:], blk)
		ck.block.Decrypt(blk, blk)
		for i := range blk {
			blk[i] ^= prev[i]
		}
		prev = cur
	}
	// PKCS#7 padding, as go-jose and jose remove it.
	n := int(ct[len(ct)-1])
	if n == 0 || n > 16 {
		return nil, errDecrypt
	}
	for _, c := range ct[len(ct)-n:] {
		if int(c) != n {
			return nil, errDecrypt
		}
	}
	return ct[:len(ct)-n], nil
}

// seal encrypts payload with a fresh random IV and returns the compact
// token. w.buf and w.out are used; payload must not be in either.
func (ck *contentKey) seal(w *work, payload []byte) string {
	// The ciphertext is at most one block longer than the payload (CBC padding).
	b := slices.Grow(w.buf[:0], ck.ivLen+len(payload)+16+ck.tagLen+8+64)
	b = b[:ck.ivLen]
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	var ct, tag []byte
	if ck.aead != nil {
		sealed := ck.aead.Seal(b[ck.ivLen:ck.ivLen], b[:ck.ivLen], payload, ck.aad)
		b = b[:ck.ivLen+len(sealed)]
		ct, tag = b[ck.ivLen:len(b)-ck.tagLen], b[len(b)-ck.tagLen:]
	} else {
		pad := 16 - len(payload)%16
		b = append(b, payload...)
		for range pad {
			b = append(b, byte(pad))
		}
		prev := b[:16] // the IV
		for off := ck.ivLen; off < len(b); off += 16 {
			blk := b[off : off+16]
			for i := range blk {
				blk[i] ^= prev[i]
			}
			ck.block.Encrypt(blk, blk)
			prev = blk
		}
		ctEnd := len(b)
		al := binary.BigEndian.AppendUint64(b[ctEnd:ctEnd], uint64(len(ck.aad))*8)
		mac := ck.macs.Get().(hash.Hash)
		mac.Reset()
		mac.Write(ck.aad)
		mac.Write(b[:ctEnd])
		mac.Write(al)
		sum := mac.Sum(b[ctEnd+8 : ctEnd+8])
		ck.macs.Put(mac)
		ct, tag = b[ck.ivLen:ctEnd], sum[:ck.tagLen]
	}
	w.buf = b
	enc := base64.RawURLEncoding
	out := slices.Grow(w.out[:0], len(ck.header)+5+enc.EncodedLen(ck.ivLen)+enc.EncodedLen(len(ct))+enc.EncodedLen(ck.tagLen))
	out = append(out, ck.header...)
	out = append(out, '.', '.') // "dir": the encrypted key is empty
	out = enc.AppendEncode(out, b[:ck.ivLen])
	out = append(out, '.')
	out = enc.AppendEncode(out, ct)
	out = append(out, '.')
	out = enc.AppendEncode(out, tag)
	w.out = out
	return string(out)
}
