package admin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/latchkey-auth/latchkey/app/openid"
)

// `latchkey oidc rotate-keys [--now]` and `latchkey oidc keys`: the
// OpenID Provider's signing keys (docs/openid-provider.md, "Keys"). A
// rotation makes a new RS256 and ES256 key, published at once and
// signing after oidc.key_publish_lead (at once with --now); the keys they
// replace stay published until the ID tokens they signed have expired.
// Every instance sees the new keys within 10 seconds.

// keySecrets are the secrets the service seals keys with: AUTH_SECRET*,
// or the one generated in the data folder. None at all is an error: a
// key sealed with a secret made up here would be useless to the service.
func (r *adminRun) keySecrets() ([]string, error) {
	if s := r.cfg.Secrets(); len(s) > 0 {
		return s, nil
	}
	path := filepath.Join(r.cfg.DataDir, "secret")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no AUTH_SECRET set and no generated secret in %s: run this command with the service's AUTH_SECRET", path)
	}
	if err := r.cfg.EnsureSecret(); err != nil {
		return nil, err
	}
	return r.cfg.Secrets(), nil
}

func oidcRotateKeys(r *adminRun) error {
	secrets, err := r.keySecrets()
	if err != nil {
		return err
	}
	s, err := r.openID(secrets)
	if err != nil {
		return err
	}
	if err := s.CheckKeys(r.ctx); errors.Is(err, openid.ErrKeysUnopened) {
		return errors.New("the secret here does not open the stored signing keys: run this command with the service's AUTH_SECRET (and AUTH_SECRET_1..3); nothing changed")
	} else if err != nil {
		return err
	}
	before, err := s.Keys(r.ctx)
	if err != nil {
		return err
	}
	lead := r.cfg.OpenID.KeyPublishLead.D()
	when := fmt.Sprintf("they sign from %s (oidc.key_publish_lead %s: clients that cache the key set fetch them first)", "%s", lead)
	switch {
	case len(before) == 0:
		lead, when = 0, "no keys existed: they sign at once"
	case r.rotateNow || lead == 0:
		lead, when = 0, "they sign at once (a client that cached the old key set refetches it when it sees the new kid)"
	}
	// A key of an earlier rotation that signs later than these would would
	// take over from them then, and be retired with the keys it replaced.
	for _, k := range before {
		if k.ActiveFrom.After(time.Now().Add(lead)) {
			return fmt.Errorf("keys of an earlier rotation sign from %s, after the new ones would: run this again after that time; nothing changed", stamp(k.ActiveFrom))
		}
	}
	ids, err := s.Rotate(r.ctx, lead)
	if err != nil {
		return err
	}
	after, err := s.Keys(r.ctx)
	if err != nil {
		return err
	}
	var made []string
	var activeFrom time.Time
	var retire *time.Time
	for _, k := range after {
		if slices.Contains(ids, k.ID) {
			made = append(made, k.ID+" ("+k.Algorithm+")")
			activeFrom = k.ActiveFrom
		} else if k.PublishedUntil != nil && (retire == nil || k.PublishedUntil.After(*retire)) {
			retire = k.PublishedUntil
		}
	}
	if strings.Contains(when, "%s") {
		when = fmt.Sprintf(when, stamp(activeFrom))
	}
	fmt.Fprintf(r.out, "new signing keys, published now: %s; %s\n", strings.Join(made, ", "), when)
	if retire != nil {
		fmt.Fprintf(r.out, "the keys they replace are published until %s (the ID tokens they signed have expired by then)\n", stamp(*retire))
	}
	fmt.Fprintln(r.out, "every instance sees the change within 10 seconds")
	return nil
}

// KeyJSON is a key as `oidc keys --json` prints it (never the private key).
type KeyJSON struct {
	ID             string     `json:"kid"`
	Algorithm      string     `json:"alg"`
	State          string     `json:"state"`
	Created        time.Time  `json:"created"`
	ActiveFrom     time.Time  `json:"activeFrom"`
	PublishedUntil *time.Time `json:"publishedUntil"`
}

func oidcKeys(r *adminRun) error {
	s, err := r.openID(nil)
	if err != nil {
		return err
	}
	keys, err := s.Keys(r.ctx)
	if err != nil {
		return err
	}
	out := make([]KeyJSON, len(keys))
	for i, k := range keys {
		out[i] = KeyJSON{ID: k.ID, Algorithm: k.Algorithm, State: k.State,
			Created: k.Created.UTC(), ActiveFrom: k.ActiveFrom.UTC(), PublishedUntil: k.PublishedUntil}
	}
	if r.json {
		return r.printJSON(out)
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KID\tALG\tSTATE\tACTIVE FROM\tPUBLISHED UNTIL")
	for _, k := range out {
		until := "-"
		if k.PublishedUntil != nil {
			until = stamp(*k.PublishedUntil)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Algorithm, k.State, stamp(k.ActiveFrom), until)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	line := plural(int64(len(out)), "published key")
	if len(out) == 0 {
		line += " (the service makes the first ones when it starts with oidc.enabled)"
	}
	fmt.Fprintln(r.out, line)
	return nil
}
