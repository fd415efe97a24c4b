package app_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuPerOp starts counting the process's CPU time (user and system, the
// garbage collector's included); the function it returns reports it per
// iteration as cpu-ns/op. On a shared machine wall time (ns/op) also
// counts other people's work; CPU time much less.
func cpuPerOp(b *testing.B) func() {
	b.Helper()
	start := cpuTime(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
