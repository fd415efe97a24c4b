package signin

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-auth/latchkey/app/email"
	"github.com/latchkey-auth/latchkey/models"
)

// MailedLinks is the machinery every e-mailed link shares: sign-in links,
// and the sign-up, reset and add-a-password links of the account pages.
// A link carries a random token; only its hash is stored, under the first
// secret, so a leaked table cannot be turned into links; a link is found
// under any secret, so one mailed before a secret rotation still works.
// Each flow hashes its tokens under its own Purpose, so no link of one
// flow works in another or as a sign-in link.
type MailedLinks struct {
	// Purpose is prefixed to the token before hashing: "" for sign-in
	// links (next-auth's own hashes, so rows it wrote match), a flow's own
	// prefix for the others. Stored rows depend on it: never change one.
	Purpose string
	// Hashes turns a value into its hash under every secret, the current
	// one first (email.HashTokens with the config's secrets).
	Hashes func(value string) []string
}

// hashes are the stored values of a token, one per secret.
func (l MailedLinks) hashes(token string) []string { return l.Hashes(l.Purpose + token) }

// Send makes a token, stores its hash (store), then delivers the link
// (mail, given the token); when the delivery fails the stored row is
// removed again (undo, which runs even when the request was cancelled),
// so an undelivered link leaves nothing behind. It returns the stored
// hash.
func (l MailedLinks) Send(ctx context.Context, store func(hash string) error, mail func(token string) error,
	undo func(ctx context.Context, hash string) error) (string, error) {
	token := email.NewToken() // hex: nothing to escape in a link
	hash := l.hashes(token)[0]
	if err := store(hash); err != nil {
		return "", err
	}
	if err := mail(token); err != nil {
		if derr := undo(context.WithoutCancel(ctx), hash); derr != nil {
			err = errors.Join(err, fmt.Errorf("the undelivered link was not removed: %w", derr))
		}
		return "", err
	}
	return hash, nil
}

// FindLink looks a token up under each of its hashes (find, which answers
// models.ErrNotFound for no live row) and returns the row and the hash it
// was stored under. An empty token, or one stored under no secret, is
// models.ErrNotFound.
func FindLink[T any](l MailedLinks, token string, find func(hash string) (T, error)) (T, string, error) {
	var none T
	if token == "" {
		return none, "", models.ErrNotFound
	}
	for _, h := range l.hashes(token) {
		row, err := find(h)
		if errors.Is(err, models.ErrNotFound) {
			continue
		}
		return row, h, err
	}
	return none, "", models.ErrNotFound
}
