package main

import (
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pinFile keeps the file at path in the OS's page cache until unpin is
// called (BENCH_SQLITE_PIN=1): it maps the file and locks the mapping
// (mlock), which reads what is not cached yet and keeps the kernel from
// evicting it. The machines this bench runs on evict page-cache pages
// nobody touched for a minute (DAMON's proactive reclaim in the guest, to
// hand memory back to the host), whatever memory is free; a lookup's
// random leaves over a 10 GB file then come from the disk in the later
// rounds. A server with the memory to spare keeps the file cached, as
// PostgreSQL's prewarmed buffers in huge pages are kept. Pages the file
// grows by later are not pinned (they are the recent, hot ones).
func pinFile(path string) (unpin func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pin %s: %w", path, err)
	}
	defer f.Close() // the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("pin %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return func() {}, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("pin %s: map: %w", path, err)
	}
	if err := unix.Mlock(b); err != nil {
		_ = unix.Munmap(b)
		return nil, fmt.Errorf("pin %s: mlock (root, or a memlock limit the size of the file): %w", path, err)
	}
	return func() { _ = unix.Munmap(b) }, nil
}

// residentShare is the share of the file at path in the OS's page cache
// now (mincore over a mapping of it): what a round's lookups found in
// memory rather than on the disk. NaN when it cannot be read.
func residentShare(path string) float64 {
	f, err := os.Open(path)
	if err != nil {
		return math.NaN()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return math.NaN()
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return math.NaN()
	}
	defer func() { _ = unix.Munmap(b) }()
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	// x/sys has no wrapper for mincore(2).
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return math.NaN()
	}
	in := 0
	for _, v := range vec {
		in += int(v & 1)
	}
	return float64(in) / float64(len(vec))
}
