package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A problem logged after the access log has filled the kept 4 MiB still
// fails the run, whatever its text; one logged before the mark, or a
// request's line lowered to info because its client had gone, does not.
// Lines may arrive cut anywhere.
func TestLogBufferFindsProblemsAfterItIsFull(t *testing.T) {
	var l logBuffer
	_, _ = l.Write([]byte("time=… level=WARN msg=\"before the load\"\n"))
	mark := l.mark()
	access := strings.Repeat("time=… level=INFO msg=request method=GET route=/api/auth/session status=200\n", 60_000)
	_, _ = l.Write([]byte(access))
	require.GreaterOrEqual(t, len(l.String()), 4<<20, "the kept log is full")
	for _, piece := range []string{"time=… level=ER", "ROR msg=\"lookup failed\" err=\"database is locked\"\n", "time=… level=INFO msg=\"request failed\" err=\"context canceled\" client_gone=true\n", "time=… level=WARN msg=x err=\"context canceled\"\n"} {
		_, _ = l.Write([]byte(piece))
	}
	require.Equal(t, []string{`time=… level=ERROR msg="lookup failed" err="database is locked"`, `time=… level=WARN msg=x err="context canceled"`}, l.problemsSince(mark))
	require.Len(t, l.problemsSince(0), 3, "the one before the mark is kept too")
}
