package openidstore

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/pgtest"
	"github.com/latchkey-auth/latchkey/models/storetest"
)

// postgresURL is the admin URL of the PostgreSQL server the tests share.
var postgresURL string

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &postgresURL)) }

// The tests run on both dialects through models/storetest; these adapt its
// helpers to this package's Store, reaching models.Store as s.store.

func eachDialect(t *testing.T, f func(t *testing.T, c models.Config)) {
	t.Helper()
	storetest.EachDialect(t, postgresURL, f)
}

func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	storetest.EachStore(t, postgresURL, func(t *testing.T, s *models.Store) { f(t, New(s)) })
}

func connect(t *testing.T, c models.Config) *Store { t.Helper(); return New(storetest.Connect(t, c)) }

func newUser(t *testing.T, s *Store, email string) *models.User {
	t.Helper()
	return storetest.NewUser(t, s.store, email)
}

func count(t *testing.T, s *Store, table string) int64 {
	t.Helper()
	return storetest.Count(t, s.store, table)
}

// TestMigrationsMatchModels: models/schema's steps create every table,
// column and index this package's models declare, on both dialects (models'
// own test of the same name covers its models).
func TestMigrationsMatchModels(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		storetest.RequireMigrated(t, s.store, &Client{}, &AuthRequest{}, &Token{}, &Consent{}, &SigningKey{})
	})
}

var now = time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.UTC)

// raceWins runs f on n goroutines at once, alternating between a and b (two
// handles on one database, as two instances), and counts the trues.
func raceWins(t *testing.T, a, b *Store, n int, f func(i int, s *Store) (bool, error)) int64 {
	t.Helper()
	var wins atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			<-start
			ok, err := f(i, s)
			if err != nil {
				errs <- err
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return wins.Load()
}
