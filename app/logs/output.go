// Package logs is where latchkey's log lines go: one output (stderr) that
// writes most lines at once and batches the access log's, one line per
// request, into a few writes a second.
package logs

import (
	"io"
	"sync"
	"time"
)

// batchBytes is how much batched output is held before it is written.
const batchBytes = 32 << 10

// Output serialises every line to w. A line written with Write goes out at
// once, after whatever is batched, so the order of lines is kept; lines
// written through Batched wait at most the flush interval (or until 32
// KiB are pending). A process that dies without Close loses at most that
// interval of batched lines: access lines, never a warning or an error.
type Output struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
	stop    chan struct{}
	done    chan struct{}
}

// NewOutput starts an output to w that writes batched lines every interval.
func NewOutput(w io.Writer, interval time.Duration) *Output {
	o := &Output{w: w, pending: make([]byte, 0, batchBytes), stop: make(chan struct{}), done: make(chan struct{})}
	go o.flushEvery(interval)
	return o
}

// Write writes p at once, after the pending batched lines.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.flushLocked(); err != nil {
		return 0, err
	}
	return o.w.Write(p)
}

// Batched is the writer for lines that may wait: the access log.
func (o *Output) Batched() io.Writer { return batched{o} }

type batched struct{ o *Output }

func (b batched) Write(p []byte) (int, error) {
	o := b.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending)+len(p) > cap(o.pending) {
		if err := o.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) > cap(o.pending) {
			return o.w.Write(p)
		}
	}
	o.pending = append(o.pending, p...)
	return len(p), nil
}

func (o *Output) flushLocked() error {
	if len(o.pending) == 0 {
		return nil
	}
	_, err := o.w.Write(o.pending)
	o.pending = o.pending[:0]
	return err
}

// Flush writes the pending batched lines now.
func (o *Output) Flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.flushLocked()
}

func (o *Output) flushEvery(interval time.Duration) {
	defer close(o.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-t.C:
			_ = o.Flush()
		}
	}
}

// Close stops the timer and writes what is pending. Lines written after
// Close go out at once.
func (o *Output) Close() error {
	select {
	case <-o.stop:
	default:
		close(o.stop)
		<-o.done
	}
	return o.Flush()
}
