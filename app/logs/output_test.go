package logs_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/logs"
)

// syncBuffer counts the writes it receives.
type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

func (b *syncBuffer) state() (string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String(), b.writes
}

// Batched lines go out together, in order, before any direct line that
// follows them; a direct line goes out at once.
func TestOutputKeepsOrderAndBatches(t *testing.T) {
	var w syncBuffer
	o := logs.NewOutput(&w, time.Hour)
	defer o.Close()
	for _, l := range []string{"a1\n", "a2\n", "a3\n"} {
		_, err := o.Batched().Write([]byte(l))
		require.NoError(t, err)
	}
	got, _ := w.state()
	require.Empty(t, got, "batched lines wait")
	_, err := o.Write([]byte("warn\n"))
	require.NoError(t, err)
	got, writes := w.state()
	require.Equal(t, "a1\na2\na3\nwarn\n", got)
	require.Equal(t, 2, writes, "the batch in one write, then the line")
}

// The timer writes batched lines; Close writes the rest; a full batch is
// written when the next line does not fit.
func TestOutputFlushes(t *testing.T) {
	var w syncBuffer
	o := logs.NewOutput(&w, 20*time.Millisecond)
	_, _ = o.Batched().Write([]byte("tick\n"))
	require.Eventually(t, func() bool { got, _ := w.state(); return got == "tick\n" }, 5*time.Second, 5*time.Millisecond)

	slow := logs.NewOutput(&w, time.Hour)
	line := strings.Repeat("x", 1000) + "\n"
	for range 40 { // 40 KB: more than one batch
		_, _ = slow.Batched().Write([]byte(line))
	}
	got, _ := w.state()
	require.Greater(t, len(got), len("tick\n"), "a full batch went out without the timer")
	require.NoError(t, slow.Close())
	got, _ = w.state()
	require.Equal(t, "tick\n"+strings.Repeat(line, 40), got, "Close wrote the rest, in order")
	require.NoError(t, o.Close())
	require.NoError(t, o.Close(), "twice is harmless")
}
