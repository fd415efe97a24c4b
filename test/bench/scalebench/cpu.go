package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/test/bench/procfs"
)

// cpuUse is the CPU time latchkey's process and the PostgreSQL server's
// processes spent during one load (DB stays 0 on SQLite, which runs
// inside latchkey).
type cpuUse struct {
	Latchkey, DB time.Duration
	// DBSys is the system (kernel) part of DB, and DBFaults the PostgreSQL
	// processes' minor page faults.
	DBSys    time.Duration
	DBFaults int64
	// DBBackends is how many connections the server accepted (new
	// backends, each a fork, a login and cold catalog caches): a pool that
	// closes and reopens connections under a steady load shows here.
	DBBackends int64
}

// perReq is u divided by n requests.
func (u cpuUse) perReq(n int) cpuUse {
	if n == 0 {
		return cpuUse{}
	}
	d := time.Duration(n)
	return cpuUse{u.Latchkey / d, u.DB / d, u.DBSys / d, u.DBFaults / int64(n), u.DBBackends / int64(n)}
}

func (u cpuUse) plus(v cpuUse) cpuUse {
	return cpuUse{u.Latchkey + v.Latchkey, u.DB + v.DB, u.DBSys + v.DBSys, u.DBFaults + v.DBFaults, u.DBBackends + v.DBBackends}
}

func (u cpuUse) minus(v cpuUse) cpuUse {
	return cpuUse{u.Latchkey - v.Latchkey, u.DB - v.DB, u.DBSys - v.DBSys, u.DBFaults - v.DBFaults, u.DBBackends - v.DBBackends}
}

// cpuMeter reads the CPU time of latchkey and, when postmaster is not 0,
// of the PostgreSQL server: the postmaster, its children (backends,
// checkpointer, walwriter, ...) and the children it has reaped (cutime,
// cstime), so a backend whose connection closed during a load still
// counts.
type cpuMeter struct {
	latchkey, postmaster int
	tick                 time.Duration // one clock tick (1/CLK_TCK s)
	statements           *statementMeter
	server               *sql.DB      // PostgreSQL's statistics; nil on SQLite
	perf                 perfRecorder // off unless profiling (profiling)
}

func newCPUMeter(latchkey, postmaster int, statements *statementMeter, server *sql.DB) cpuMeter {
	return cpuMeter{latchkey: latchkey, postmaster: postmaster, tick: procfs.Tick(), statements: statements, server: server}
}

// profiling is m recording latchkey's profile of each load into dir,
// the files named prefix-load.data.
func (m cpuMeter) profiling(dir, prefix string) cpuMeter {
	m.perf = perfRecorder{dir: dir, prefix: prefix}
	return m
}

// measure runs a load (name: what it is, for its profile's file) and adds
// the CPU spent while it ran, and PostgreSQL's costliest statements
// meanwhile.
func (m cpuMeter) measure(name string, run func() stat) stat {
	m.statements.reset()
	stopPerf := m.perf.start(m.latchkey, name)
	before := m.read()
	st := run()
	after := m.read()
	stopPerf()
	st.CPU = after.minus(before)
	st.Statements = m.statements.top(8)
	return st
}

func (m cpuMeter) read() cpuUse {
	var u cpuUse
	if st, err := procfs.ReadStat(m.latchkey); err == nil {
		u.Latchkey = time.Duration(st.CPU()) * m.tick
	}
	if m.postmaster == 0 {
		return u
	}
	pm, err := procfs.ReadStat(m.postmaster)
	if err != nil {
		return u
	}
	ticks, sys, faults := pm.CPU()+pm.CUTime+pm.CSTime, pm.STime+pm.CSTime, pm.MinFlt+pm.CMinFlt
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == m.postmaster {
			continue
		}
		if st, err := procfs.ReadStat(pid); err == nil && st.PPID == m.postmaster {
			ticks, sys, faults = ticks+st.CPU(), sys+st.STime, faults+st.MinFlt
		}
	}
	u.DB, u.DBSys, u.DBFaults = time.Duration(ticks)*m.tick, time.Duration(sys)*m.tick, faults
	if m.server != nil {
		// Counted when a backend starts (reported within a second or so)
		// or ends, so a load's connections that closed all count.
		_ = m.server.QueryRow("SELECT COALESCE(sum(sessions), 0) FROM pg_stat_database").Scan(&u.DBBackends)
	}
	return u
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
	st, err := procfs.ReadStat(backend)
	if err != nil {
		return 0, nil
	}
	return st.PPID, nil
}
