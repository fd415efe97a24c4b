package app

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A purge that fails while the database is down is logged once, however
// often it is tried meanwhile, is tried again without waiting its whole
// interval, and says "resumed" once it works; the other purges run all the
// same.
func TestPurgeOutageLoggedOnce(t *testing.T) {
	var logs bytes.Buffer // read once the purge has stopped
	var failing atomic.Int32
	failing.Store(5)
	var runs, others atomic.Int32
	p := &purger{every: time.Millisecond, log: slog.New(slog.NewTextHandler(&logs, nil)), tasks: []func(context.Context) (int64, error){
		func(context.Context) (int64, error) {
			runs.Add(1)
			if failing.Add(-1) >= 0 {
				return 0, errors.New("connection refused")
			}
			return 0, nil
		},
		func(context.Context) (int64, error) { others.Add(1); return 0, nil },
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.run(ctx); close(done) }()
	require.Eventually(t, func() bool { return runs.Load() >= 10 }, 10*time.Second, time.Millisecond)
	cancel()
	<-done
	out := logs.String()
	require.Equal(t, 1, strings.Count(out, "purge expired rows: failing"), out)
	require.Contains(t, out, "connection refused")
	require.Equal(t, 1, strings.Count(out, "purge expired rows: resumed"), out)
	require.Contains(t, out, "failed_runs=5")
	require.GreaterOrEqual(t, others.Load(), runs.Load()-1, "a failing purge keeps no other from running")
}
