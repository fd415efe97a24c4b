package openid

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/gorilla/securecookie"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/latchkey-auth/latchkey/app/random"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// Algorithms are the algorithms latchkey keeps a key of, always both: the
// key set offers each, and signing_algorithm picks the one that signs.
var Algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// keyReload is how long an instance trusts the key list it read: a
// rotation by an admin (another process) reaches it within this.
const keyReload = 10 * time.Second

// keyRing is the signing keys: read from the store, parsed once per key,
// reloaded every keyReload.
type keyRing struct {
	store  Store
	codecs []securecookie.Codec
	alg    jose.SignatureAlgorithm
	now    func() time.Time

	mu     sync.Mutex
	read   time.Time
	keys   []*parsedKey
	parsed map[string]*parsedKey
}

type parsedKey struct {
	id         string
	alg        jose.SignatureAlgorithm
	public     jose.JSONWebKey
	private    crypto.Signer
	activeFrom time.Time
	created    time.Time
}

func newKeyRing(store Store, codecs []securecookie.Codec, alg string, now func() time.Time) *keyRing {
	return &keyRing{store: store, codecs: codecs, alg: jose.SignatureAlgorithm(alg), now: now, parsed: map[string]*parsedKey{}}
}

// current returns the published keys, reloading when due; with none at
// all (the first start with the provider on) it makes the first pair.
func (k *keyRing) current(ctx context.Context) ([]*parsedKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if k.keys != nil && now.Sub(k.read) < keyReload {
		return k.keys, nil
	}
	rows, err := k.store.SigningKeys(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("read signing keys: %w", err)
	}
	if len(rows) == 0 {
		// Another instance may be making the first keys at this moment:
		// FirstKeys keeps one set, which every instance then signs with
		// (retiring another's would leave it signing, for keyReload, with
		// a key no longer published).
		fresh, err := k.generate(now, now)
		if err != nil {
			return nil, err
		}
		if rows, err = k.store.FirstKeys(ctx, fresh, now); err != nil {
			return nil, fmt.Errorf("store first signing keys: %w", err)
		}
	}
	keys := make([]*parsedKey, 0, len(rows))
	for i := range rows {
		p, err := k.parse(&rows[i])
		if err != nil {
			return nil, err
		}
		keys = append(keys, p)
	}
	k.keys, k.read = keys, now
	return keys, nil
}

// published is the key set: every key the store publishes now, read at
// each call (relying parties fetch it rarely and cache it), so a key that
// another instance already signs with — made by `latchkey oidc
// rotate-keys --now`, read there when its copy was due — is in every
// instance's set at once, not after this one's copy is keyReload old;
// plus any key of this instance's copy the store no longer lists, which
// may sign here until the copy goes.
func (k *keyRing) published(ctx context.Context) ([]*parsedKey, error) {
	cached, err := k.current(ctx) // makes the first keys when there are none
	if err != nil {
		return nil, err
	}
	rows, err := k.store.SigningKeys(ctx, k.now())
	if err != nil {
		// The database failed after current answered from its copy: that
		// copy is what this instance signs with, as before this read.
		return cached, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]*parsedKey, 0, len(rows)+len(cached))
	for i := range rows {
		p, err := k.parse(&rows[i])
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	for _, c := range cached {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// signing is the key that signs now (signingOf).
func (k *keyRing) signing(ctx context.Context) (*parsedKey, error) {
	keys, err := k.current(ctx)
	if err != nil {
		return nil, err
	}
	best, ok := signingOf(keys, string(k.alg), k.now(), func(p *parsedKey) keyTimes {
		return keyTimes{string(p.alg), p.id, p.created, p.activeFrom}
	})
	if !ok {
		return nil, fmt.Errorf("no active %s signing key", k.alg)
	}
	return best, nil
}

// keyTimes are what decides which key signs.
type keyTimes struct {
	alg, id             string
	created, activeFrom time.Time
}

// signingOf is, among the active keys (activeFrom not after now) of alg,
// the one made last: a key still waiting for its turn when a later
// rotation (say --now) made a newer one never signs, since its
// publication ends with the keys that newer one replaced. The service's
// signing and `latchkey oidc keys`' states both come from here.
func signingOf[T any](keys []T, alg string, now time.Time, times func(T) keyTimes) (T, bool) {
	var best T
	var bt keyTimes
	found := false
	for _, k := range keys {
		t := times(k)
		if t.alg == alg && !t.activeFrom.After(now) && (!found || newer(t, bt)) {
			best, bt, found = k, t, true
		}
	}
	return best, found
}

func newer(a, b keyTimes) bool {
	if !a.created.Equal(b.created) {
		return a.created.After(b.created)
	}
	return a.activeFrom.After(b.activeFrom) || a.activeFrom.Equal(b.activeFrom) && a.id > b.id
}

// forget drops the cached list, so the next read sees a rotation at once.
func (k *keyRing) forget() {
	k.mu.Lock()
	k.keys = nil
	k.mu.Unlock()
}

func (k *keyRing) parse(row *openidstore.SigningKey) (*parsedKey, error) {
	if p, ok := k.parsed[row.ID]; ok {
		return p, nil
	}
	var der []byte
	if err := securecookie.DecodeMulti("key", row.PrivateKey, &der, k.codecs...); err != nil {
		return nil, fmt.Errorf("open signing key %s (is the secret that sealed it among AUTH_SECRET*?): %w", row.ID, err)
	}
	priv, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parse signing key %s: %w", row.ID, err)
	}
	signer, ok := priv.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("signing key %s: not a signer", row.ID)
	}
	var pub jose.JSONWebKey
	if err := json.Unmarshal([]byte(row.PublicJWK), &pub); err != nil {
		return nil, fmt.Errorf("signing key %s: public key: %w", row.ID, err)
	}
	p := &parsedKey{id: row.ID, alg: jose.SignatureAlgorithm(row.Algorithm), public: pub, private: signer, activeFrom: row.ActiveFrom, created: row.CreatedAt}
	k.parsed[row.ID] = p
	return p, nil
}

// generate makes one key of each algorithm, made at created and active
// from activeFrom.
func (k *keyRing) generate(created, activeFrom time.Time) ([]openidstore.SigningKey, error) {
	out := make([]openidstore.SigningKey, 0, len(Algorithms))
	for _, alg := range Algorithms {
		var priv crypto.Signer
		var err error
		if alg == jose.RS256 {
			priv, err = rsa.GenerateKey(rand.Reader, 2048)
		} else {
			priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		}
		if err != nil {
			return nil, fmt.Errorf("generate %s key: %w", alg, err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			return nil, fmt.Errorf("encode %s key: %w", alg, err)
		}
		sealed, err := securecookie.EncodeMulti("key", der, k.codecs[0])
		if err != nil {
			return nil, fmt.Errorf("seal %s key: %w", alg, err)
		}
		id := random.Base64URL(12)
		pub, err := json.Marshal(jose.JSONWebKey{Key: priv.Public(), KeyID: id, Algorithm: string(alg), Use: "sig"})
		if err != nil {
			return nil, fmt.Errorf("encode %s public key: %w", alg, err)
		}
		out = append(out, openidstore.SigningKey{
			ID: id, Algorithm: string(alg), PublicJWK: string(pub), PrivateKey: sealed,
			CreatedAt: created, ActiveFrom: activeFrom,
		})
	}
	return out, nil
}

// Rotate makes a new key of each algorithm, published now and signing
// after lead; the keys it replaces stay published until the ID tokens
// they signed have expired (their last signing moment plus idTTL, and a
// minute of clock skew). It returns the new keys' ids.
func (s *Service) Rotate(ctx context.Context, lead time.Duration) ([]string, error) {
	if lead < 0 {
		return nil, errors.New("rotate keys: negative lead")
	}
	existing, err := s.store.SigningKeys(ctx, s.now())
	if err != nil {
		return nil, fmt.Errorf("rotate keys: %w", err)
	}
	if len(existing) == 0 {
		lead = 0 // nothing signs meanwhile: the first keys sign at once
	}
	// Made strictly after every key there is (the signing key is the one
	// made last), even by a clock that has not moved.
	created := s.now()
	for _, e := range existing {
		if !created.After(e.CreatedAt) {
			created = e.CreatedAt.Add(time.Millisecond)
		}
	}
	activeFrom := s.now().Add(lead)
	fresh, err := s.keys.generate(created, activeFrom)
	if err != nil {
		return nil, err
	}
	if err := s.store.RotateKeys(ctx, fresh, activeFrom.Add(s.set.IDTTL+time.Minute)); err != nil {
		return nil, fmt.Errorf("rotate keys: %w", err)
	}
	s.keys.forget()
	ids := make([]string, len(fresh))
	for i, f := range fresh {
		ids[i] = f.ID
	}
	return ids, nil
}

// KeyInfo describes a published key, for `latchkey oidc keys`. State is
// "signing" (signingOf, of signing_algorithm), "published" (the other
// algorithm's current key), "next" (published, signing later) or
// "retired" (replaced; published until the ID tokens it signed expire).
type KeyInfo struct {
	ID, Algorithm, State string
	Created, ActiveFrom  time.Time
	PublishedUntil       *time.Time
}

// Keys lists the published keys with their states.
func (s *Service) Keys(ctx context.Context) ([]KeyInfo, error) {
	now := s.now()
	rows, err := s.store.SigningKeys(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("read signing keys: %w", err)
	}
	times := func(r openidstore.SigningKey) keyTimes { return keyTimes{r.Algorithm, r.ID, r.CreatedAt, r.ActiveFrom} }
	current := map[string]string{}
	for _, alg := range Algorithms {
		if k, ok := signingOf(rows, string(alg), now, times); ok {
			current[k.ID] = "published"
			if alg == s.keys.alg {
				current[k.ID] = "signing"
			}
		}
	}
	out := make([]KeyInfo, len(rows))
	for i, r := range rows {
		state := current[r.ID]
		switch {
		case state != "":
		case r.ActiveFrom.After(now):
			state = "next"
		default:
			state = "retired"
		}
		out[i] = KeyInfo{ID: r.ID, Algorithm: r.Algorithm, State: state, Created: r.CreatedAt, ActiveFrom: r.ActiveFrom, PublishedUntil: r.PublishedUntil}
	}
	return out, nil
}

// ErrKeysUnopened: a stored key does not open with the secrets given.
var ErrKeysUnopened = errors.New("a stored signing key does not open with these secrets")

// CheckKeys opens every stored key with this service's secrets
// (ErrKeysUnopened when one does not): an admin command refuses to add
// keys sealed under a secret the service lacks.
func (s *Service) CheckKeys(ctx context.Context) error {
	rows, err := s.store.SigningKeys(ctx, s.now())
	if err != nil {
		return fmt.Errorf("read signing keys: %w", err)
	}
	s.keys.mu.Lock()
	defer s.keys.mu.Unlock()
	for i := range rows {
		if _, err := s.keys.parse(&rows[i]); err != nil {
			return fmt.Errorf("%w: %w", ErrKeysUnopened, err)
		}
	}
	return nil
}

// signingKey and publicKey adapt parsedKey to the library (op.SigningKey,
// op.Key).
type signingKey struct{ p *parsedKey }

func (s signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return s.p.alg }
func (s signingKey) Key() any                                    { return s.p.private }
func (s signingKey) ID() string                                  { return s.p.id }

type publicKey struct{ p *parsedKey }

func (k publicKey) ID() string                         { return k.p.id }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return k.p.alg }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return k.p.public.Key }

var (
	_ op.SigningKey = signingKey{}
	_ op.Key        = publicKey{}
)
