package main

import "github.com/latchkey-auth/latchkey/test/bench/procfs"

// memory is a process's resident set in KiB from /proc/<pid>/status: all
// of it, and its anonymous and file-backed parts. The file part is the
// binary's own pages; the anonymous part (heaps, SQLite's page caches) is
// what must stay flat as the tables grow.
type memory struct{ RSS, Anon, File int64 }

func readMemory(pid int) memory {
	st := procfs.Status(pid)
	return memory{RSS: st["VmRSS"], Anon: st["RssAnon"], File: st["RssFile"]}
}
