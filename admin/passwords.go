package admin

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/term"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/app/password"
	"github.com/latchkey-auth/latchkey/models"
)

// usersCreate is `latchkey users create <email> [--password-stdin]`: a
// verified user, for operators who turn sign-up off or invite people. With
// --password-stdin the first line of standard input is the password (a
// terminal is asked without echo), held to the same policy as sign-up;
// without it the user has no password and signs in by e-mail link or
// OAuth (the linking rules apply) until they set one.
func usersCreate(r *adminRun) error {
	addr, err := email.Normalize(r.args[0])
	if err != nil {
		return fmt.Errorf("%q is not an e-mail address", r.args[0])
	}
	var hash string
	if r.passwordStdin {
		pw, err := r.readPassword()
		if err != nil {
			return err
		}
		if err := password.NewPolicy().Check(pw, addr); err != nil {
			return fmt.Errorf("password refused: %w", err)
		}
		if hash, err = password.Hash(pw); err != nil {
			return fmt.Errorf("password refused: %w", err)
		}
	}
	now := r.now.UTC()
	u := &models.User{Email: &addr, EmailVerified: &now}
	if hash != "" {
		err = r.store.CreateUserWithPassword(r.ctx, u, hash)
	} else {
		err = r.store.CreateUser(r.ctx, u)
	}
	if errors.Is(err, models.ErrConflict) {
		return fmt.Errorf("a user with the e-mail address %s exists already", addr)
	}
	if err != nil {
		return err
	}
	with := "without a password"
	if hash != "" {
		with = "with a password"
	}
	fmt.Fprintf(r.out, "created user %s, e-mail verified, %s\n", label(u), with)
	return nil
}

// readPassword reads the password: from a terminal without echo, else the
// first line of standard input (its line end dropped, nothing trimmed:
// spaces are part of a password). At most password.MaxInputBytes are read.
func (r *adminRun) readPassword() (string, error) {
	if r.inTTY {
		fmt.Fprint(r.errw, "Password: ")
		b, err := term.ReadPassword(r.inFD)
		fmt.Fprintln(r.errw)
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(io.LimitReader(r.in, password.MaxInputBytes+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	if errors.Is(err, io.EOF) && len(line) > password.MaxInputBytes {
		return "", fmt.Errorf("password refused: %w", password.ErrInputTooBig)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", errors.New("no password on standard input (--password-stdin reads its first line)")
	}
	return line, nil
}

// printPassword adds `users show`'s password line, for users who have one
// (never the hash).
func (r *adminRun) printPassword(w io.Writer, userID string) error {
	at, err := r.store.PasswordChangedAt(r.ctx, userID)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "password:\tset %s\n", stamp(at))
	return nil
}
