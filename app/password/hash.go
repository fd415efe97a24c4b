package password

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/latchkey-auth/latchkey/app/random"
)

// Params are Argon2id's cost parameters and sizes.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes over memory
	Threads uint8  // lanes
	SaltLen uint32 // bytes
	KeyLen  uint32 // bytes
}

// DefaultParams are OWASP's recommended Argon2id settings (Password
// Storage Cheat Sheet, "Argon2id": "a minimum configuration of 19 MiB of
// memory, an iteration count of 2, and 1 degree of parallelism"), with
// RFC 9106's 16-byte salt and a 32-byte tag. One hash costs ~19 MiB and
// some tens of milliseconds of one core.
var DefaultParams = Params{Memory: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}

// ErrMalformedHash is returned by Verify for a stored string that is not a
// PHC Argon2id hash it can check (or whose parameters are out of range).
var ErrMalformedHash = errors.New("password: malformed argon2id hash")

// dummyDefault is a hash of a random, forgotten password made with
// DefaultParams. Verify checks unknown users against it, so "no such user"
// costs one full Argon2id like "wrong password" (TestDummyMatchesDefaults
// keeps it in step with DefaultParams).
const dummyDefault = "$argon2id$v=19$m=19456,t=2,p=1$" +
	"1eoQgnoKrzOzmkH+scZJdw$t0MXkNNzVRgC6xynkKQvhClfdQx17+AdyDG7S61Os8Q"

// Hasher hashes and verifies with one set of parameters. The zero value is
// not usable; use New, or the package-level Hash and Verify (DefaultParams).
type Hasher struct {
	params Params
	dummy  string
	// slots bounds the hashes computed at once (see Limit); nil: no bound.
	slots chan struct{}
	wait  time.Duration
}

// ErrBusy is the answer when every hashing slot stayed taken for the
// Limit's wait: the caller refuses the attempt instead of queueing
// without bound.
var ErrBusy = errors.New("too many password checks in progress")

// Limit returns a copy of h that computes at most n hashes at once and
// waits at most wait for a slot. Each Argon2id call holds Memory KiB (19
// MiB by default): without a bound, a burst of sign-in attempts (unknown
// addresses cost the same, and a CSRF token is free) would hold that much
// per connection, thousands of them.
func (h *Hasher) Limit(n int, wait time.Duration) *Hasher {
	c := *h
	c.slots, c.wait = make(chan struct{}, n), wait
	return &c
}

// idKey is argon2.IDKey in one of h's slots.
func (h *Hasher) idKey(pw string, salt []byte, p Params) ([]byte, error) {
	if h.slots != nil {
		select {
		case h.slots <- struct{}{}:
		default:
			t := time.NewTimer(h.wait)
			select {
			case h.slots <- struct{}{}:
				t.Stop()
			case <-t.C:
				return nil, ErrBusy
			}
		}
		defer func() { <-h.slots }()
	}
	return argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, p.KeyLen), nil
}

// New returns a Hasher for p. Unless p are DefaultParams it hashes a random
// password once, to get a dummy hash of the same cost for unknown users.
func New(p Params) (*Hasher, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	h := &Hasher{params: p, dummy: dummyDefault}
	if p != DefaultParams {
		h.dummy, _ = h.hashNormalized(random.Hex(16)) // no slots yet: cannot fail
	}
	return h, nil
}

// Default is the Hasher with DefaultParams (its dummy hash precomputed).
func Default() *Hasher { return &Hasher{params: DefaultParams, dummy: dummyDefault} }

// Params are the parameters new hashes are made with.
func (h *Hasher) Params() Params { return h.params }

// Hash normalises pw (see Normalize) and returns its Argon2id hash as a
// PHC string: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>, salt and hash
// in unpadded standard base64. It does not apply the Policy: callers
// that accept a new password check it first.
func Hash(pw string) (string, error) { return Default().Hash(pw) }

// Hash is the package-level Hash with h's parameters.
func (h *Hasher) Hash(pw string) (string, error) {
	n, err := Normalize(pw)
	if err != nil {
		return "", err
	}
	return h.hashNormalized(n)
}

func (h *Hasher) hashNormalized(n string) (string, error) {
	p := h.params
	salt := random.Bytes(int(p.SaltLen))
	key, err := h.idKey(n, salt, p)
	if err != nil {
		return "", err
	}
	return encode(p, salt, key), nil
}

// Verify reports whether pw matches the PHC string phc, comparing in
// constant time. needsRehash is true when pw matched but phc was made with
// other parameters than the current ones: the caller should store a fresh
// Hash(pw). An empty phc stands for "no such user": pw is checked against
// a dummy hash of the same cost and ok is false, so the answer and its
// timing do not tell whether the account exists. err is an input error of
// Normalize (refused before any hashing) or ErrMalformedHash.
func Verify(phc, pw string) (ok, needsRehash bool, err error) { return Default().Verify(phc, pw) }

// Verify is the package-level Verify against h's current parameters.
func (h *Hasher) Verify(phc, pw string) (ok, needsRehash bool, err error) {
	n, err := Normalize(pw)
	if err != nil {
		return false, false, err
	}
	unknown := phc == ""
	if unknown {
		phc = h.dummy
	}
	p, salt, want, err := decode(phc)
	if err != nil {
		return false, false, err
	}
	got, err := h.idKey(n, salt, p)
	if err != nil {
		return false, false, err
	}
	match := subtle.ConstantTimeCompare(got, want) == 1
	if unknown || !match {
		return false, false, nil
	}
	return true, p != h.params, nil
}

func encode(p Params, salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// decode parses a PHC Argon2id string into its parameters, salt and key.
func decode(phc string) (Params, []byte, []byte, error) {
	var p Params
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, nil, nil, ErrMalformedHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return p, nil, nil, ErrMalformedHash
	}
	n, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads)
	// Sscanf stops early and accepts signs; re-printing must give the same text.
	if err != nil || n != 3 || fmt.Sprintf("m=%d,t=%d,p=%d", p.Memory, p.Time, p.Threads) != parts[3] ||
		parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return p, nil, nil, ErrMalformedHash
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil {
		return p, nil, nil, ErrMalformedHash
	}
	p.SaltLen, p.KeyLen = uint32(len(salt)), uint32(len(key))
	if p.check() != nil {
		return p, nil, nil, ErrMalformedHash
	}
	return p, salt, key, nil
}

// check bounds the parameters, so neither a configuration nor a stored
// hash can make one verification cost unbounded memory or time.
func (p Params) check() error {
	switch {
	case p.Memory < 8*uint32(p.Threads) || p.Memory > 1<<20:
		return fmt.Errorf("password: argon2id memory %d KiB out of range [8·p, 1 GiB]", p.Memory)
	case p.Time < 1 || p.Time > 64:
		return fmt.Errorf("password: argon2id time %d out of range [1, 64]", p.Time)
	case p.Threads < 1:
		return errors.New("password: argon2id needs at least one thread")
	case p.SaltLen < 8 || p.SaltLen > 64:
		return fmt.Errorf("password: salt length %d out of range [8, 64]", p.SaltLen)
	case p.KeyLen < 16 || p.KeyLen > 128:
		return fmt.Errorf("password: key length %d out of range [16, 128]", p.KeyLen)
	}
	return nil
}
