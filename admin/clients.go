package admin

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/openid"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/openidstore"
)

// `latchkey clients add|list|remove|rotate-secret|end-previous-secret|hash-secret`: the
// OpenID Provider's clients (docs/openid-provider.md). Clients of
// config.yaml are listed but changed only there; the others live in the
// database, added here. A secret is printed once, when it is made, and
// stored as its SHA-256: no command shows it again. The commands work
// whether oidc.enabled is on or not (a client can be prepared before the
// provider is turned on) and say so when it is off.

// clientFlags are `clients add`'s settings of the new client.
type clientFlags struct {
	name                            string
	redirects, postLogouts, scopes  repeated
	public, firstParty, refreshToks bool
}

func (c *clientFlags) bind(fs *flag.FlagSet) {
	c.redirects = repeated{meta: "<uri>", required: true}
	c.postLogouts = repeated{meta: "<uri>"}
	c.scopes = repeated{meta: "<scope>"}
	fs.StringVar(&c.name, "name", "", "the name the consent page shows")
	fs.Var(&c.redirects, "redirect-uri", "a redirect URI (repeatable; matched exactly)")
	fs.Var(&c.postLogouts, "post-logout-uri", "a post-logout redirect URI (repeatable)")
	fs.Var(&c.scopes, "scope", "a scope the client may ask for (repeatable; default: all)")
	fs.BoolVar(&c.public, "public", false, "a public client (no secret; PKCE)")
	fs.BoolVar(&c.firstParty, "first-party", false, "skip the consent page")
	fs.BoolVar(&c.refreshToks, "refresh-tokens", false, "refresh tokens without offline_access")
}

// repeated is a flag given any number of times.
type repeated struct {
	values   []string
	meta     string // its argument in the usage line
	required bool
}

func (r *repeated) String() string {
	if r == nil {
		return ""
	}
	return strings.Join(r.values, " ")
}

func (r *repeated) Set(v string) error {
	r.values = append(r.values, v)
	return nil
}

// checkClientsAdd: a name and a redirect URI, each valid, before the
// database is opened.
func checkClientsAdd(r *adminRun) error {
	c := r.client
	switch {
	case strings.TrimSpace(c.name) == "":
		return errors.New("give the client's name (--name)")
	case len(c.redirects.values) == 0:
		return errors.New("give at least one --redirect-uri")
	}
	secret := ""
	if !c.public {
		secret = strings.Repeat("x", 32) // stands for the secret AddClient makes
	}
	id := r.args[0]
	cfg := config.Config{OpenID: config.OpenID{SigningAlgorithm: "RS256", AccessTokenLifetime: config.Duration(time.Hour),
		IDTokenLifetime: config.Duration(time.Hour), RefreshTokenLifetime: config.Duration(time.Hour),
		Clients: []config.OpenIDClient{{ID: id, Name: c.name, Secret: secret, Public: c.public,
			RedirectURIs: c.redirects.values, PostLogoutRedirectURIs: c.postLogouts.values, Scopes: c.scopes.values}}}}
	if p := cfg.OpenIDProblems(); len(p) > 0 {
		prefix := fmt.Sprintf("oidc.clients[0] (%s): ", id)
		for i := range p {
			p[i] = strings.TrimPrefix(p[i], prefix)
		}
		return errors.New(strings.Join(p, "; "))
	}
	return nil
}

// openID is the provider's rules on the command's database, without the
// HTTP server. Only `oidc rotate-keys` seals a key, so the others do with
// any secret when none is configured.
func (r *adminRun) openID(secrets []string) (*openid.Service, error) {
	if !r.cfg.OpenID.Enabled {
		fmt.Fprintln(r.errw, "note: oidc.enabled is false: this takes effect when the OpenID Provider is turned on")
	}
	if len(secrets) == 0 {
		secrets = []string{"latchkey admin: no secret needed to read clients and keys"}
	}
	o := r.cfg.OpenID
	return openid.New(openidstore.New(r.store), nil, openid.Settings{
		Algorithm: o.SigningAlgorithm, AccessTTL: o.AccessTokenLifetime.D(), IDTTL: o.IDTokenLifetime.D(),
		RefreshTTL: o.RefreshTokenLifetime.D(), KeyLead: o.KeyPublishLead.D(), Clients: o.Clients,
	}, secrets, time.Now, slog.New(slog.DiscardHandler))
}

// clientError turns the rules' refusals into one line each: an unknown
// client is bad input (exit 2), a config.yaml client a refusal (exit 1).
func clientError(id string, err error) error {
	switch {
	case errors.Is(err, openid.ErrNotFound):
		return badInput{fmt.Errorf("no client %q among the stored ones (`latchkey clients list`)", id)}
	case errors.Is(err, openid.ErrConfigClient):
		return fmt.Errorf("client %q is defined in config.yaml (oidc.clients): change or remove it there; nothing changed", id)
	case errors.Is(err, models.ErrConflict):
		return badInput{fmt.Errorf("a client %q exists already; nothing changed", id)}
	}
	return err
}

func clientsAdd(r *adminRun) error {
	s, err := r.openID(nil)
	if err != nil {
		return err
	}
	c, id := r.client, r.args[0]
	secret, err := s.AddClient(r.ctx, openid.NewClient{
		ID: id, Name: strings.TrimSpace(c.name), Public: c.public, FirstParty: c.firstParty, RefreshTokens: c.refreshToks,
		RedirectURIs: c.redirects.values, PostLogoutRedirectURIs: c.postLogouts.values, Scopes: c.scopes.values,
	})
	if err != nil {
		return clientError(id, err)
	}
	kind := "confidential"
	if c.public {
		kind = "public (no secret: it proves itself with PKCE)"
	}
	fmt.Fprintf(r.out, "added client %q (%s): %s, %s\n", id, strings.TrimSpace(c.name), kind, plural(int64(len(c.redirects.values)), "redirect URI"))
	if secret != "" {
		fmt.Fprintln(r.out, "its secret, shown only now (latchkey keeps only its SHA-256; `clients rotate-secret` makes a new one):")
		fmt.Fprintln(r.out, "client_secret: "+secret)
	}
	return nil
}

// ClientJSON is a client as `clients list --json` prints it: never a
// secret or its hash.
type ClientJSON struct {
	ID                     string   `json:"id"`
	Name                   string   `json:"name"`
	Source                 string   `json:"source"` // config or stored
	Public                 bool     `json:"public"`
	FirstParty             bool     `json:"firstParty"`
	RefreshTokens          bool     `json:"refreshTokens"`
	RedirectURIs           []string `json:"redirectUris"`
	PostLogoutRedirectURIs []string `json:"postLogoutRedirectUris"`
	Scopes                 []string `json:"scopes"`
	// PreviousSecretUntil is when the secret a rotation replaced stops
	// working; absent when none does.
	PreviousSecretUntil *time.Time `json:"previousSecretUntil,omitempty"`
}

func clientsList(r *adminRun) error {
	s, err := r.openID(nil)
	if err != nil {
		return err
	}
	list, err := s.Clients(r.ctx)
	if err != nil {
		return err
	}
	out := make([]ClientJSON, len(list))
	for i, c := range list {
		src := "stored"
		if c.FromConfig {
			src = "config"
		}
		out[i] = ClientJSON{ID: c.ID, Name: c.Name, Source: src, Public: c.Public, FirstParty: c.FirstParty, RefreshTokens: c.Refresh,
			RedirectURIs: nonNil(c.Redirects), PostLogoutRedirectURIs: nonNil(c.PostLogouts), Scopes: nonNil(c.Scopes)}
		if until := c.PreviousSecretUntil; !until.IsZero() {
			until = until.UTC()
			out[i].PreviousSecretUntil = &until
		}
	}
	if r.json {
		return r.printJSON(out)
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tSOURCE\tTYPE\tCONSENT\tREFRESH\tREDIRECT URIS\tSCOPES")
	for _, c := range out {
		kind, consent, refresh := "confidential", "asked", "offline_access"
		if c.Public {
			kind = "public"
		}
		if c.FirstParty {
			consent = "first-party"
		}
		if c.RefreshTokens {
			refresh = "always"
		}
		name := c.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, name, c.Source, kind, consent, refresh,
			strings.Join(c.RedirectURIs, " "), strings.Join(c.Scopes, " "))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(r.out, plural(int64(len(out)), "client"))
	for _, c := range out {
		if c.PreviousSecretUntil != nil {
			fmt.Fprintf(r.out, "client %q: its previous secret keeps working until %s (`latchkey clients end-previous-secret %s` ends it now)\n",
				c.ID, stamp(*c.PreviousSecretUntil), c.ID)
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// confirmClient opens the provider's rules and asks question's question
// about the client r.args[0] as listed, when there is one to ask ("":
// none); an unknown client is not asked about, and the command's own call
// refuses it.
func confirmClient(r *adminRun, question func(openid.ClientInfo) string) (*openid.Service, error) {
	s, err := r.openID(nil)
	if err != nil {
		return nil, err
	}
	all, err := s.Clients(r.ctx)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(all, func(c openid.ClientInfo) bool { return c.ID == r.args[0] }); i >= 0 {
		if q := question(all[i]); q != "" {
			if err := r.confirm(q); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

func clientsRemove(r *adminRun) error {
	id := r.args[0]
	// Asked only about a stored client: a config.yaml one is refused
	// below, as without the question.
	s, err := confirmClient(r, func(c openid.ClientInfo) string {
		if c.FromConfig {
			return ""
		}
		return fmt.Sprintf("Remove client %q (%s) with its consents and tokens? Its users' tokens stop working at once.", id, c.Name)
	})
	if err != nil {
		return err
	}
	if err := s.RemoveClient(r.ctx, id); err != nil {
		return clientError(id, err)
	}
	fmt.Fprintf(r.out, "removed client %q with its consents and tokens: its users' tokens stop working at once\n", id)
	return nil
}

// defaultKeepPrevious is how long a rotated client secret keeps working
// unless told: a day to redeploy the relying parties.
const defaultKeepPrevious = "24h"

// checkRotateSecret reads --keep-previous: 0, or a duration up to
// openid.MaxKeepPrevious.
func checkRotateSecret(r *adminRun) error {
	d, err := config.ParseDuration(r.keepPrevious)
	if strings.TrimSpace(r.keepPrevious) == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 || d > openid.MaxKeepPrevious {
		return fmt.Errorf("--keep-previous %s: a duration from 0 (end the previous secret at once) to 30d, e.g. 24h or 7d", r.keepPrevious)
	}
	r.keepPreviousTime = d
	return nil
}

func clientsRotateSecret(r *adminRun) error {
	s, err := r.openID(nil)
	if err != nil {
		return err
	}
	id := r.args[0]
	secret, until, err := s.RotateSecret(r.ctx, id, r.keepPreviousTime)
	if err != nil {
		return clientError(id, err)
	}
	if until.IsZero() {
		fmt.Fprintf(r.out, "client %q has a new secret; the previous one stopped working. The new one, shown only now:\n", id)
	} else {
		fmt.Fprintf(r.out, "client %q has a new secret; the previous one keeps working until %s (--keep-previous %s), then only the new one. The new one, shown only now:\n",
			id, stamp(until), strings.TrimSpace(r.keepPrevious))
	}
	fmt.Fprintln(r.out, "client_secret: "+secret)
	return nil
}

// clientsEndPreviousSecret stops at once the previous secret a rotation
// kept, after a confirmation when one is in force.
func clientsEndPreviousSecret(r *adminRun) error {
	id := r.args[0]
	s, err := confirmClient(r, func(c openid.ClientInfo) string {
		if c.PreviousSecretUntil.IsZero() {
			return ""
		}
		return fmt.Sprintf("End client %q's previous secret now (it works until %s)? Relying parties still using it fail at once.", id, stamp(c.PreviousSecretUntil))
	})
	if err != nil {
		return err
	}
	until, err := s.EndPreviousSecret(r.ctx, id)
	if err != nil {
		return clientError(id, err)
	}
	if until.IsZero() {
		fmt.Fprintf(r.out, "client %q has no previous secret in force; nothing changed\n", id)
		return nil
	}
	fmt.Fprintf(r.out, "client %q: its previous secret stopped working (it would have until %s); only the current one works\n", id, stamp(until))
	return nil
}

// minClientSecret is the shortest secret config.yaml accepts.
const minClientSecret = 32

// clientsHashSecret reads a secret (a terminal: without echo; else the
// first line of standard input) and prints config.yaml's secret_hash.
func clientsHashSecret(r *adminRun) error {
	var secret string
	if r.inTTY {
		fmt.Fprint(r.errw, "Client secret: ")
		b, err := term.ReadPassword(r.inFD)
		fmt.Fprintln(r.errw)
		if err != nil {
			return fmt.Errorf("read the secret: %w", err)
		}
		secret = string(b)
	} else {
		line, err := bufio.NewReader(io.LimitReader(r.in, 4096)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read the secret from standard input: %w", err)
		}
		secret = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	}
	switch {
	case secret == "":
		return badInput{errors.New("no secret on standard input (its first line is the secret)")}
	case len(secret) < minClientSecret:
		return badInput{fmt.Errorf("secret too short (%d characters); use at least %d", len(secret), minClientSecret)}
	}
	fmt.Fprintln(r.out, openid.HashSecret(secret))
	return nil
}
