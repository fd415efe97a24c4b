// Package sqlitefile tells whether the SQLite file a store opened is still
// the one its path names, and still writable (models.Store.Ready), without
// opening it.
package sqlitefile

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// File is the SQLite database file as it was when the store opened it:
// readiness checks that the path still names that very file.
type File struct {
	path string
	info os.FileInfo
}

// Stat is the file at path now.
func Stat(path string) (*File, error) {
	path, err := filepath.Abs(path) // as the driver opened it (fileURI)
	if err != nil {
		return nil, fmt.Errorf("database file: %w", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("database file: %w", err)
	}
	return &File{path: path, info: info}, nil
}

// Intact reports an outage that a query on an already-open SQLite
// connection would not notice: the open connections keep working on a file
// that was removed, renamed or replaced (everything written from then on is
// lost at the next start), and a file this process can no longer open for
// writing, or a disk that is gone, fails only the next new connection.
//
// It never opens the file: POSIX (fcntl) locks belong to the process and
// the file, so closing any descriptor of the database drops every lock
// SQLite holds on it, the shared lock of each WAL connection included. The
// next other process to close the database (an admin command, a backup)
// would then take it for the last user, checkpoint, and delete the -wal
// and -shm files this process still writes to. Writability is asked of
// the kernel instead (access(2) with the effective ids), which needs no
// descriptor.
func (f *File) Intact() error {
	now, err := os.Stat(f.path)
	if err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	if !os.SameFile(now, f.info) {
		return fmt.Errorf("database file %s was replaced: the open connections still use the old one", f.path)
	}
	if err := unix.Faccessat(unix.AT_FDCWD, f.path, unix.W_OK, unix.AT_EACCESS); err != nil {
		return fmt.Errorf("database file: %w", &os.PathError{Op: "access", Path: f.path, Err: err})
	}
	return nil
}
