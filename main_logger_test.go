package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The OpenID Provider's library writes its error answers through slog's
// default logger at error level for a server_error: one whose request the
// client abandoned comes out at info, marked client_gone, while the same
// failure of a live request stays an error. Neither line carries the
// relying party's state.
func TestDefaultLoggerLowersAbandonedRequests(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	var buf bytes.Buffer
	setDefaultLogger(newLogger(&buf, "text"))

	failure := oidc.ErrServerError().WithParent(errors.New("rotate refresh token: sql: transaction has already been committed or rolled back"))
	failure.State = "rp-state-value"

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	op.WriteError(httptest.NewRecorder(), httptest.NewRequest("POST", "/oidc/token", nil).WithContext(gone), failure, nil)
	op.WriteError(httptest.NewRecorder(), httptest.NewRequest("POST", "/oidc/token", nil), failure, nil)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got:\n%s", buf.String())
	}
	if !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], "client_gone=true") {
		t.Errorf("abandoned request's failure: %q, want level=INFO client_gone=true", lines[0])
	}
	if !strings.Contains(lines[1], "level=ERROR") || strings.Contains(lines[1], "client_gone") {
		t.Errorf("live request's failure: %q, want level=ERROR", lines[1])
	}
	if strings.Contains(buf.String(), "rp-state-value") {
		t.Errorf("the relying party's state reached the log:\n%s", buf.String())
	}
}
