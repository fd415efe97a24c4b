// Package procfs reads a process's CPU time and memory from Linux's /proc,
// for the benchmarks (test/bench/httpbench, test/bench/scalebench), which
// measure latchkey and its database as separate processes.
package procfs

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Stat is what the benchmarks read of /proc/PID/stat: the parent's pid and
// the CPU times in clock ticks (see Tick), the process's own and those of
// the children it has reaped.
type Stat struct {
	PPID                         int
	UTime, STime, CUTime, CSTime int64
	// MinFlt and CMinFlt are the minor page faults of the process and of
	// its reaped children: a PostgreSQL backend takes one on its first
	// touch of each page of shared_buffers.
	MinFlt, CMinFlt int64
}

// CPU is the process's own CPU time, user and system, in clock ticks.
func (s Stat) CPU() int64 { return s.UTime + s.STime }

// ReadStat reads /proc/pid/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, err
	}
	// The command name, field 2, is in parentheses and may hold spaces
	// and parentheses: the numbered fields start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 15 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	n := func(k int) int64 { v, _ := strconv.ParseInt(f[k], 10, 64); return v }
	return Stat{PPID: int(n(1)), MinFlt: n(7), CMinFlt: n(8), UTime: n(11), STime: n(12), CUTime: n(13), CSTime: n(14)}, nil
}

// Tick is one clock tick, the unit of Stat's times: 1/CLK_TCK seconds,
// 1/100 when getconf cannot say (USER_HZ on Linux).
func Tick() time.Duration {
	hz := 100
	if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && n > 0 {
			hz = n
		}
	}
	return time.Second / time.Duration(hz)
}

// Status is /proc/pid/status's sizes in KiB by name (VmRSS, VmHWM,
// RssAnon, RssFile, ...); empty when the process is gone.
func Status(pid int) map[string]int64 { return kibFile(fmt.Sprintf("/proc/%d/status", pid)) }

// Meminfo is /proc/meminfo's sizes in KiB by name (MemAvailable, Cached,
// ...); empty when it cannot be read.
func Meminfo() map[string]int64 { return kibFile("/proc/meminfo") }

// kibFile reads the "Name: N kB" lines of a /proc file.
func kibFile(path string) map[string]int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, " kB")), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}
