package openid

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// sharedKeys is one database's oidc_signing_keys for two instances: the
// store's key statements over a slice (the rest of Store is not used).
// beforeFirstRead runs inside the first SigningKeys call, after the rows
// were read: another instance's work lands between that read and what the
// reader writes next.
type sharedKeys struct {
	Store
	mu              sync.Mutex
	rows            []openidstore.SigningKey
	beforeFirstRead func()
}

func (s *sharedKeys) published(now time.Time) []openidstore.SigningKey {
	var out []openidstore.SigningKey
	for _, r := range s.rows {
		if r.PublishedUntil == nil || r.PublishedUntil.After(now) {
			out = append(out, r)
		}
	}
	return out
}

func (s *sharedKeys) SigningKeys(_ context.Context, now time.Time) ([]openidstore.SigningKey, error) {
	s.mu.Lock()
	out := s.published(now)
	hook := s.beforeFirstRead
	s.beforeFirstRead = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return out, nil
}

func (s *sharedKeys) RotateKeys(_ context.Context, keys []openidstore.SigningKey, retireAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.rows {
		if s.rows[i].PublishedUntil == nil && slices.ContainsFunc(keys, func(k openidstore.SigningKey) bool { return k.Algorithm == s.rows[i].Algorithm }) {
			s.rows[i].PublishedUntil = &retireAt
		}
	}
	s.rows = append(s.rows, keys...)
	return nil
}

func (s *sharedKeys) FirstKeys(_ context.Context, keys []openidstore.SigningKey, now time.Time) ([]openidstore.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.published(now)) == 0 {
		s.rows = append(s.rows, keys...)
	}
	return s.published(now), nil
}

// onKeys is an instance of the service on db's keys, with clock.
func onKeys(t *testing.T, db *sharedKeys, clock func() time.Time) *Service {
	t.Helper()
	s, err := New(db, nil, Settings{Algorithm: "ES256", IDTTL: time.Hour}, []string{"a secret long enough for the codecs here"}, clock, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFirstKeysOfTwoInstances: two instances of a fresh deployment make
// their first keys at the same moment (B reads no key, A makes and stores
// its pair, B makes its own). Whatever each signs with must stay in the
// key set both publish, or a relying party cannot verify that instance's
// ID tokens: B's rotation used to retire A's key at once while A went on
// signing with it from its copy for keyReload.
func TestFirstKeysOfTwoInstances(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	db := &sharedKeys{}
	instance := func() *Service { return onKeys(t, db, func() time.Time { return now }) }
	a, b := instance(), instance()
	var signsA *parsedKey
	db.beforeFirstRead = func() {
		k, err := a.keys.signing(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		signsA = k
	}
	signsB, err := b.keys.signing(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if signsA == nil {
		t.Fatal("A made no key")
	}
	now = now.Add(time.Second) // both go on signing from their copies
	for _, s := range []*Service{a, b} {
		set, err := s.KeySet(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []*parsedKey{signsA, signsB} {
			if !slices.ContainsFunc(set, func(p op.Key) bool { return p.ID() == k.id }) {
				t.Errorf("key %s signs ID tokens but is not in the key set published", k.id)
			}
		}
	}
	stored, _ := db.SigningKeys(ctx, now)
	for _, k := range []*parsedKey{signsA, signsB} {
		if !slices.ContainsFunc(stored, func(r openidstore.SigningKey) bool { return r.ID == k.id }) {
			t.Errorf("key %s signs ID tokens but the database no longer publishes it", k.id)
		}
	}
}

// TestRotationPublishedAtOnce: `latchkey oidc rotate-keys --now` (after a
// leak) makes a key that signs at once; an instance that reads the keys
// after it signs with it, so every instance's key set must name it at
// once, not only once its own copy of the keys is keyReload old.
func TestRotationPublishedAtOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	db := &sharedKeys{}
	instance := func() *Service { return onKeys(t, db, func() time.Time { return now }) }
	a := instance()
	old, err := a.keys.signing(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := instance().Rotate(ctx, 0); err != nil { // the admin command
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	fresh, err := instance().keys.signing(ctx) // an instance whose copy is new
	if err != nil {
		t.Fatal(err)
	}
	if fresh.id == old.id {
		t.Fatal("the rotation made no new signing key")
	}
	set, err := a.KeySet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []*parsedKey{old, fresh} {
		if !slices.ContainsFunc(set, func(p op.Key) bool { return p.ID() == k.id }) {
			t.Errorf("key %s signs ID tokens but is not in A's key set", k.id)
		}
	}
}
