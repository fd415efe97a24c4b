package main

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A pinned file is all in the page cache, even after the kernel was asked
// to drop it; unpinned, the same request drops it.
func TestPinKeepsTheFileCached(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(path, make([]byte, 16<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil { // clean pages can be dropped
		t.Fatal(err)
	}
	drop := func() {
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
	}
	unpin, err := pinFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop()
	if got := residentShare(path); got != 1 {
		t.Fatalf("pinned file: %.2f of it cached, want all", got)
	}
	unpin()
	drop()
	if got := residentShare(path); got != 0 {
		t.Fatalf("unpinned file after FADV_DONTNEED: %.2f of it cached, want none", got)
	}
}
