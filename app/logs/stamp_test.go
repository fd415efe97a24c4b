package logs_test

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/logs"
)

// TestAccessTimesAreSlogs: one Access writing a stream of times (many in
// the same second, then the next, in several zones, with every kind of
// fraction) stamps each line as slog does: the second it keeps is never
// another's.
func TestAccessTimesAreSlogs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("x", 5*3600+30*60), time.FixedZone("y", -8*3600)}
	fractions := []int{0, 1, 999, 1000, 999999, 1000000, 100000000, 120000000, 999999999}
	base := time.Date(2026, 11, 23, 4, 59, 58, 0, time.UTC)
	for _, json := range []bool{false, true} {
		var got bytes.Buffer
		a := logs.NewAccess(&got, json, slog.LevelInfo)
		for i := range 2000 {
			now := base.Add(time.Duration(i/50) * time.Second).Add(time.Duration(fractions[r.IntN(len(fractions))]))
			if r.IntN(3) == 0 {
				now = now.Add(time.Duration(r.IntN(1e9)))
			}
			now = now.In(zones[(i/25)%len(zones)])
			got.Reset()
			a.Request(now, "GET", "/api/auth/session", 200, time.Millisecond, "id")
			var want bytes.Buffer
			var h slog.Handler = slog.NewTextHandler(&want, nil)
			if json {
				h = slog.NewJSONHandler(&want, nil)
			}
			rec := slog.NewRecord(now, slog.LevelInfo, "request", 0)
			rec.AddAttrs(slog.String("method", "GET"), slog.String("route", "/api/auth/session"), slog.Int("status", 200),
				slog.Duration("duration", time.Millisecond), slog.String("request_id", "id"))
			require.NoError(t, h.Handle(context.Background(), rec))
			require.Equal(t, want.String(), got.String(), "%v", now)
		}
	}
}
