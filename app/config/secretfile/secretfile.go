// Package secretfile keeps the secret latchkey generates for itself when
// none is configured (development over http): one file in the data
// folder, written once and never replaced, whichever of several
// processes started on that folder gets there first.
package secretfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/latchkey-auth/latchkey/app/random"
)

// Ensure returns the secret in dir/secret, generating it first when the
// file does not exist. A file holding fewer than 32 characters is an
// error: silently replacing a secret would end every session.
func Ensure(dir string) (string, error) {
	path := filepath.Join(dir, "secret")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = storeNew(dir, path)
	}
	switch {
	case err == nil && len(bytes.TrimSpace(b)) >= 32:
		return string(bytes.TrimSpace(b)), nil
	case err == nil:
		return "", fmt.Errorf("%s holds fewer than 32 characters; fix or delete it", path)
	default:
		return "", fmt.Errorf("generated secret: %w", err)
	}
}

// storeNew puts a new secret at path, unless another process (an
// instance started beside this one on the same data folder) was first,
// and returns the file's content either way. The secret is written whole
// to a private file of its own and then linked into place, which fails
// when path exists: nothing overwrites a secret already signing, and no
// reader meets a half-written one.
func storeNew(dir, path string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".secret-*")
	if err != nil {
		return nil, fmt.Errorf("store generated secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	secret := []byte(random.Hex(32) + "\n")
	_, err = tmp.Write(secret)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("store generated secret: %w", err)
	}
	err = os.Link(tmp.Name(), path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: created exclusively instead,
		// which still never overwrites one.
		err = writeExclusive(path, secret)
	}
	switch {
	case err == nil:
		return secret, nil
	case errors.Is(err, fs.ErrExist):
		return os.ReadFile(path)
	default:
		return nil, fmt.Errorf("store generated secret: %w", err)
	}
}

// writeExclusive creates path (0600) with b in it, failing when it exists.
func writeExclusive(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
