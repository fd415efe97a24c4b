package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models"
)

// cpuUse is the CPU time latchkey's process and the PostgreSQL server's
// processes spent during one load (DB stays 0 on SQLite, which runs
// inside latchkey).
type cpuUse struct{ Latchkey, DB time.Duration }

// perReq is u divided by n requests.
func (u cpuUse) perReq(n int) cpuUse {
	if n == 0 {
		return cpuUse{}
	}
	return cpuUse{u.Latchkey / time.Duration(n), u.DB / time.Duration(n)}
}

// cpuMeter reads the CPU time of latchkey and, when postmaster is not 0,
// of the PostgreSQL server: the postmaster, its children (backends,
// checkpointer, walwriter, ...) and the children it has reaped (cutime,
// cstime), so a backend whose connection closed during a load still
// counts.
type cpuMeter struct {
	latchkey, postmaster int
	tick                 time.Duration // one clock tick (1/CLK_TCK s)
}

func newCPUMeter(latchkey, postmaster int) cpuMeter {
	hz := 100 // USER_HZ on Linux, when getconf is missing
	if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && n > 0 {
			hz = n
		}
	}
	return cpuMeter{latchkey: latchkey, postmaster: postmaster, tick: time.Second / time.Duration(hz)}
}

// measure runs a load and adds the CPU spent while it ran.
func (m cpuMeter) measure(run func() stat) stat {
	before := m.read()
	st := run()
	after := m.read()
	st.CPU = cpuUse{after.Latchkey - before.Latchkey, after.DB - before.DB}
	return st
}

func (m cpuMeter) read() cpuUse {
	var u cpuUse
	if f, _, err := procStat(m.latchkey); err == nil {
		u.Latchkey = time.Duration(f[11]+f[12]) * m.tick
	}
	if m.postmaster == 0 {
		return u
	}
	f, _, err := procStat(m.postmaster)
	if err != nil {
		return u
	}
	ticks := f[11] + f[12] + f[13] + f[14]
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == m.postmaster {
			continue
		}
		if f, ppid, err := procStat(pid); err == nil && ppid == m.postmaster {
			ticks += f[11] + f[12]
		}
	}
	u.DB = time.Duration(ticks) * m.tick
	return u
}

// procStat is /proc/pid/stat's numeric fields from the third (state is
// 0, so utime is [11], stime [12], cutime [13], cstime [14]) and the
// parent's pid.
func procStat(pid int) (f []int64, ppid int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, 0, err
	}
	// The command name may hold spaces and parentheses: the fields start
	// after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 15 {
		return nil, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	f = make([]int64, 15)
	for k := 1; k < 15; k++ {
		f[k], _ = strconv.ParseInt(fields[k], 10, 64)
	}
	return f, int(f[1]), nil
}

// postmasterPID is the PostgreSQL server's main process on this machine:
// the parent of the backend serving s's connection, when that backend is
// a local postgres process; 0 when the server is elsewhere (a
// LATCHKEY_TEST_POSTGRES_URL on another host), so its CPU goes unreported.
func postmasterPID(s *models.Store) (int, error) {
	var backend int
	if err := s.DB().Raw("SELECT pg_backend_pid()").Scan(&backend).Error; err != nil {
		return 0, fmt.Errorf("backend pid: %w", err)
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", backend))
	if err != nil || !strings.HasPrefix(string(comm), "postgres") {
		return 0, nil
	}
	_, ppid, err := procStat(backend)
	if err != nil {
		return 0, nil
	}
	return ppid, nil
}
