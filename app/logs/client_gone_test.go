package logs_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/latchkey-auth/latchkey/app/logs"
)

func TestClientGoneLowersCancelledRequestsFailures(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(logs.ClientGone(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	late, stop := context.WithTimeout(context.Background(), 0)
	defer stop()
	<-late.Done()

	log.ErrorContext(gone, "request error", "err", errors.New("rotate refresh token: sql: transaction has already been committed or rolled back"))
	log.WarnContext(gone, "auth request")
	log.ErrorContext(live, "real failure")
	log.Error("no context")
	log.InfoContext(gone, "plain info")
	log.ErrorContext(late, "too slow")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("want 6 lines, got %d:\n%s", len(lines), buf.String())
	}
	want := []struct {
		level, msg string
		gone       bool
	}{
		{"INFO", "request error", true},
		{"INFO", "auth request", true},
		{"ERROR", "real failure", false},
		{"ERROR", "no context", false},
		{"INFO", "plain info", false},
		{"ERROR", "too slow", false},
	}
	for i, w := range want {
		l := lines[i]
		if !strings.Contains(l, "level="+w.level+" ") || !strings.Contains(l, `msg="`+w.msg+`"`) && !strings.Contains(l, "msg="+w.msg) {
			t.Errorf("line %d = %q, want level %s and msg %q", i, l, w.level, w.msg)
		}
		if got := strings.Contains(l, "client_gone=true"); got != w.gone {
			t.Errorf("line %d = %q: client_gone %v, want %v", i, l, got, w.gone)
		}
	}
	if !strings.Contains(lines[0], "rolled back") {
		t.Errorf("the lowered line lost its error: %q", lines[0])
	}
}

// A level filter above info drops what was lowered to info: a service
// run at LOG_LEVEL=warn does not print the cancelled requests at all.
func TestClientGoneKeepsTheLevelFilter(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(logs.ClientGone(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	log.ErrorContext(gone, "request error")
	if buf.Len() != 0 {
		t.Fatalf("a lowered record passed a warn filter: %s", buf.String())
	}
	log.With("component", "oidc").WithGroup("g").ErrorContext(context.Background(), "kept", "k", 1)
	if !strings.Contains(buf.String(), `"level":"ERROR"`) || !strings.Contains(buf.String(), `"component":"oidc"`) || !strings.Contains(buf.String(), `"g":{"k":1}`) {
		t.Fatalf("attrs or groups lost through the wrapper: %s", buf.String())
	}
}
