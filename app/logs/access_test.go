package logs_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/logs"
)

// Access writes what slog would, byte for byte, in both formats: for
// latchkey's plain routes and ids (its own writer) and for strings slog
// must quote or escape (handed to slog).
func TestAccessLineIsSlogs(t *testing.T) {
	at := []time.Time{
		time.Date(2026, 11, 23, 1, 2, 3, 0, time.UTC),
		time.Date(2026, 11, 23, 1, 2, 3, 456789012, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 100000000, time.FixedZone("x", 5*3600+30*60)),
		time.Now(),
	}
	lines := []struct {
		method, route, id string
		status            int
		took              time.Duration
	}{
		{"GET", "/api/auth/session", "4f2a9c0e1b7d4e3f8a6c5b4d3e2f1a0b", 200, 1234567 * time.Nanosecond},
		{"POST", "/api/auth/callback/:provider", "abc-123_x.y:z/w+", 302, 17 * time.Microsecond},
		{"HEAD", "/health/ready", "id", 503, 2 * time.Second},
		{"GET", "unmatched", "req", 404, 0},
		{"GET", "/api/auth/signin", "a=b", 200, time.Millisecond},          // = is quoted in text
		{"GET", "/route with space", "x", 200, time.Millisecond},           // space is quoted
		{"GET", "/api/auth/session", `q"uote<>&`, 200, time.Millisecond},   // JSON escapes
		{"GET", "/api/auth/session", "ünïcode\x01", 500, time.Millisecond}, // non-ASCII, control
		{"PROPFIND", "/x", "", 400, time.Hour},                             // empty is quoted
	}
	for c := range 256 { // every byte, in a route and in an id: quoted or escaped as slog does
		lines = append(lines, struct {
			method, route, id string
			status            int
			took              time.Duration
		}{"GET", "/r" + string([]byte{byte(c)}), "id" + string([]byte{byte(c)}), 200, time.Millisecond})
	}
	for _, json := range []bool{false, true} {
		for _, now := range at {
			for _, l := range lines {
				var got, want bytes.Buffer
				logs.NewAccess(&got, json, slog.LevelInfo).Request(now, l.method, l.route, l.status, l.took, l.id)
				var h slog.Handler = slog.NewTextHandler(&want, nil)
				if json {
					h = slog.NewJSONHandler(&want, nil)
				}
				r := slog.NewRecord(now, slog.LevelInfo, "request", 0)
				r.AddAttrs(slog.String("method", l.method), slog.String("route", l.route), slog.Int("status", l.status),
					slog.Duration("duration", l.took), slog.String("request_id", l.id))
				require.NoError(t, h.Handle(context.Background(), r))
				require.Equal(t, want.String(), got.String())
			}
		}
	}
}

func TestAccessEnabledFollowsTheLevel(t *testing.T) {
	require.True(t, logs.NewAccess(&bytes.Buffer{}, false, slog.LevelInfo).Enabled())
	require.True(t, logs.NewAccess(&bytes.Buffer{}, false, slog.LevelDebug).Enabled())
	require.False(t, logs.NewAccess(&bytes.Buffer{}, true, slog.LevelWarn).Enabled())
}

func BenchmarkAccessLine(b *testing.B) {
	var buf bytes.Buffer
	a := logs.NewAccess(&buf, false, slog.LevelInfo)
	now := time.Now()
	for b.Loop() {
		buf.Reset()
		a.Request(now, "GET", "/api/auth/session", 200, 1234567, "4f2a9c0e1b7d4e3f8a6c5b4d3e2f1a0b")
	}
}

func BenchmarkAccessLineSlog(b *testing.B) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, nil))
	for b.Loop() {
		buf.Reset()
		l.LogAttrs(context.Background(), slog.LevelInfo, "request", slog.String("method", "GET"),
			slog.String("route", "/api/auth/session"), slog.Int("status", 200),
			slog.Duration("duration", 1234567), slog.String("request_id", "4f2a9c0e1b7d4e3f8a6c5b4d3e2f1a0b"))
	}
}
