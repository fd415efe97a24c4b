package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// memory is a process's resident set in KiB from /proc/<pid>/status: all
// of it, and its anonymous and file-backed parts. SQLite's mmap shows as
// file pages the kernel may drop; the anonymous part (heaps, caches) is
// what must stay flat as the tables grow.
type memory struct{ RSS, Anon, File int64 }

func readMemory(pid int) memory {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}
	}
	var m memory
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			m.RSS = n
		case "RssAnon":
			m.Anon = n
		case "RssFile":
			m.File = n
		}
	}
	return m
}
