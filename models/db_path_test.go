package models

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Open uses the file named by path, whatever characters the name holds.
// Put into a file: URI unescaped, a path makes SQLite read "#" as a
// fragment, "?" as options and "%41" as "A", and open (and create,
// world-readable) another file than the 0600 one Open made.
func TestOpenExactPath(t *testing.T) {
	root := t.TempDir()
	for i, rel := range []string{"a#b.db", "a%41.db", "a?x=1.db", "a b.db", "ünï©ode.db", "a&b=c;d.db", ":memory:", "a%.db", "d#%3F?x/l.db"} {
		t.Run(rel, func(t *testing.T) {
			base := filepath.Join(root, fmt.Sprint(i)) // a fresh folder, created by Open
			path := filepath.Join(base, rel)
			s, err := Open(path)
			require.NoError(t, err)
			// The driver's options still apply: none was read from the name.
			var mode string
			var fk int
			require.NoError(t, s.db.Raw("PRAGMA journal_mode").Scan(&mode).Error)
			require.NoError(t, s.db.Raw("PRAGMA foreign_keys").Scan(&fk).Error)
			require.Equal(t, "wal", mode)
			require.Equal(t, 1, fk)
			u := newUser(t, s, "keep@example.com")
			// Open: the file and its -wal / -shm companions, all private.
			requireOnly(t, base, path, path+"-shm", path+"-wal")
			require.NoError(t, s.Close())
			requireOnly(t, base, path)

			s = openAt(t, path)
			var got User
			require.NoError(t, s.db.First(&got, "id = ?", u.ID).Error, "the data is read back from the same file")
			require.Equal(t, "keep@example.com", *got.Email)
		})
	}
}

// requireOnly checks that the tree under base holds the file want, maybe
// the optional ones, the folders leading to them and nothing else; files
// are 0600 and folders 0700.
func requireOnly(t *testing.T, base, want string, optional ...string) {
	t.Helper()
	allowed := map[string]bool{want: true}
	for _, o := range optional {
		allowed[o] = true
	}
	var files []string
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			require.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "folder %s is private", p)
			return nil
		}
		files = append(files, p)
		require.Equal(t, os.FileMode(0o600), info.Mode(), "%s is a private regular file", p)
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, files, want)
	for _, f := range files {
		require.True(t, allowed[f], "unexpected file %q (all: %q)", f, files)
	}
}
