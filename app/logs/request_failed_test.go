package logs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/latchkey-auth/latchkey/app/logs"
)

// TestRequestFailedLowersOnlyCancellations: a failure whose error is a
// cancellation is written at info with client_gone=true; any other cause
// keeps the level asked for, however the client fared.
func TestRequestFailedLowersOnlyCancellations(t *testing.T) {
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	// A real dial in a cancelled context: the net package's own
	// "operation was canceled", as the drivers meet it while connecting.
	_, dialErr := (&net.Dialer{}).DialContext(gone, "tcp", "127.0.0.1:9")
	if dialErr == nil {
		t.Fatal("a dial in a cancelled context connected")
	}
	late, stop := context.WithTimeout(context.Background(), 0)
	defer stop()
	<-late.Done()

	cases := []struct {
		name  string
		err   error
		level slog.Level
		want  string
		gone  bool
	}{
		{"statement cancelled", fmt.Errorf("send link: store token: %w", context.Canceled), slog.LevelWarn, "INFO", true},
		{"dial cancelled", fmt.Errorf("connect: %w", dialErr), slog.LevelError, "INFO", true},
		{"deadline passed", fmt.Errorf("read session: %w", late.Err()), slog.LevelWarn, "WARN", false},
		{"database locked", errors.New("database is locked"), slog.LevelError, "ERROR", false},
		{"refusal", errors.New("state does not match"), slog.LevelWarn, "WARN", false},
		{"no error", nil, slog.LevelWarn, "WARN", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := slog.New(slog.NewTextHandler(&buf, nil))
			logs.RequestFailed(l, c.level, c.err, "request failed", "err", c.err, "request_id", "r1")
			line := buf.String()
			if !strings.Contains(line, "level="+c.want+" ") {
				t.Fatalf("want level %s, got %q", c.want, line)
			}
			if got := strings.Contains(line, "client_gone=true"); got != c.gone {
				t.Fatalf("client_gone: want %v, got %q", c.gone, line)
			}
			if !strings.Contains(line, "request_id=r1") || !strings.Contains(line, `msg="request failed"`) {
				t.Fatalf("the line lost its message or attributes: %q", line)
			}
		})
	}
}

// TestRequestFailedUnderAWarnFilter: a lowered line is dropped by a
// handler that keeps warnings and above, as any info line is.
func TestRequestFailedUnderAWarnFilter(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	logs.RequestFailed(l, slog.LevelError, context.Canceled, "gone")
	logs.RequestFailed(l, slog.LevelError, errors.New("broken"), "kept")
	if strings.Contains(buf.String(), "gone") || !strings.Contains(buf.String(), "kept") {
		t.Fatalf("got %q", buf.String())
	}
}
