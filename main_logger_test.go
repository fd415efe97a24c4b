package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"net/url"
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

// A client secret sent in a Basic header with a bad %-escape: the library
// answers invalid_client and logs url.QueryUnescape's error as the
// parent, which quotes the escape — "%" and the two characters of the
// secret after it. The line keeps that the escape was bad, not which.
func TestLibraryLinesKeepNoPartOfABadlyEscapedSecret(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	var buf bytes.Buffer
	setDefaultLogger(newLogger(&buf, "json"))

	_, err := url.QueryUnescape("s3cr%Q7tail")
	refused := oidc.ErrInvalidClient().WithDescription("invalid basic auth header").WithParent(err)
	op.RequestError(httptest.NewRecorder(), httptest.NewRequest("POST", "/oidc/token", nil), refused, nil)

	if strings.Contains(buf.String(), "%Q7") || !strings.Contains(buf.String(), "invalid URL escape") {
		t.Errorf("want the line without the escape's characters, got:\n%s", buf.String())
	}
}
