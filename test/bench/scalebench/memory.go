package main

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/test/bench/procfs"
)

// memory is a process's resident set in KiB from /proc/<pid>/status: all
// of it, and its anonymous and file-backed parts. The file part is the
// binary's own pages; the anonymous part (heaps, SQLite's page caches) is
// what must stay flat as the tables grow. The rest tells what the
// anonymous part holds: Go's heap in use and goroutine stacks (KiB) and
// goroutines, from latchkey's /metrics (Go's own collector), and on
// PostgreSQL the connections latchkey holds open (each one a goroutine
// pair and buffers in latchkey, a backend in PostgreSQL). SQLite's page
// caches are C memory: the anonymous part less Go's.
type memory struct {
	RSS, Anon, File         int64
	HeapInuse, Stacks       int64
	Goroutines, Connections int64
}

func readMemory(pid int, metricsURL string, s *models.Store) memory {
	st := procfs.Status(pid)
	m := memory{RSS: st["VmRSS"], Anon: st["RssAnon"], File: st["RssFile"]}
	gauges := readGauges(metricsURL, "go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes", "go_goroutines")
	m.HeapInuse, m.Stacks, m.Goroutines = gauges[0]>>10, gauges[1]>>10, gauges[2]
	if s.Dialect() == models.DialectPostgres {
		// Every backend on the bench's database, less the bench's own pool.
		var all int64
		if err := s.DB().Raw("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()").Scan(&all).Error; err == nil {
			if sqlDB, err := s.DB().DB(); err == nil {
				m.Connections = all - int64(sqlDB.Stats().OpenConnections)
			}
		}
	}
	return m
}

// readGauges are the named gauges of a Prometheus text page, 0 for each
// missing (or the page unreadable: the report then shows zeros).
func readGauges(url string, names ...string) []int64 {
	out := make([]int64, len(names))
	c := http.Client{Timeout: 5 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		return out
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		for i, n := range names {
			if name == n {
				f, _ := strconv.ParseFloat(value, 64)
				out[i] = int64(f)
			}
		}
	}
	return out
}
