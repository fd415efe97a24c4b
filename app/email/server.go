package email

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	mail "github.com/wneessen/go-mail"

	"github.com/latchkey-auth/latchkey/app/egress"
)

// Server is an SMTP server URL, parsed.
type Server struct {
	Host     string // as configured; certificates and Loopback are checked against it
	Port     int
	Implicit bool // smtps://: TLS from the first byte
	User     string
	Pass     string
	// Insecure (?insecure=true) lets mail to a host that is not loopback
	// go in plain text when the server offers no STARTTLS. Credentials
	// never do: see SMTP.tlsPolicy.
	Insecure bool
}

// ParseServer reads smtp://[user:pass@]host[:port][?insecure=true]
// (default port 587) or smtps://... (default port 465), with the user name
// and password percent-decoded, as nodemailer does. Its errors show the
// URL with the userinfo replaced by ***: they end up in check-config output
// and start-up logs, which get pasted into tickets.
func ParseServer(raw string) (Server, error) {
	fail := func(reason string) (Server, error) {
		return Server{}, fmt.Errorf("smtp server %s: %s", redact(raw), reason)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole string, and even its inner error
		// can quote a piece of a password that broke the parse.
		return fail("not a valid URL (in the user name and password, write @ : / ? # % and spaces as %40 %3A %2F %3F %23 %25 %20)")
	}
	var s Server
	switch u.Scheme {
	case "smtp":
		s.Port = mail.DefaultPortTLS
	case "smtps":
		s.Port, s.Implicit = mail.DefaultPortSSL, true
	default:
		return fail("scheme must be smtp or smtps")
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return fail("no host (the form is smtp://[user:pass@]host[:port])")
	}
	if (u.Path != "" && u.Path != "/") || strings.Contains(raw, "#") {
		// Most likely a / or # in the password, which then ends the host.
		return fail("a server URL has no path or fragment (in the password, write / as %2F and # as %23)")
	}
	if p := u.Port(); p != "" {
		if s.Port, err = strconv.Atoi(p); err != nil || s.Port < 1 || s.Port > 65535 {
			return fail("bad port")
		}
	}
	if s.Insecure, err = insecureOption(u.RawQuery); err != nil {
		return fail(err.Error())
	}
	if s.Insecure && s.Implicit {
		return fail("insecure=true is for smtp:// only (smtps:// is TLS from the first byte, its certificate always checked)")
	}
	s.Host = u.Hostname()
	if u.User != nil {
		s.User = u.User.Username()
		s.Pass, _ = u.User.Password()
	}
	return s, nil
}

// insecureOption reads the query, whose one option is insecure. Anything
// else is refused rather than ignored: a nodemailer option such as
// tls.rejectUnauthorized would otherwise seem to work. Keys are not
// quoted: with an unescaped ? in a password, they hold part of it.
func insecureOption(rawQuery string) (bool, error) {
	if rawQuery == "" {
		return false, nil
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil || len(q) != 1 || len(q["insecure"]) != 1 {
		return false, errors.New("the one query option is ?insecure=true (in the password, write ? as %3F)")
	}
	switch q.Get("insecure") {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("insecure must be true or false")
}

// Addr is host:port, for logs.
func (s Server) Addr() string { return s.Host + ":" + strconv.Itoa(s.Port) }

// Loopback reports whether the host is localhost or a loopback address
// (127.0.0.0/8, ::1): a local MTA, with no network path for an attacker to
// sit on, so TLS is not required. The configured name decides, not what it
// resolves to: the rule webhooks' http URLs follow too (app/egress).
func (s Server) Loopback() bool { return egress.IsLoopbackHost(s.Host) }

// Warning is what check-config and the start-up log say about this server,
// or "" when there is nothing to say.
func (s Server) Warning() string {
	if !s.Insecure || s.Loopback() {
		return ""
	}
	w := "smtp server " + s.Addr() + " has ?insecure=true: when it offers no STARTTLS, sign-in links go in plain text, " +
		"and anyone on the network path can read them and sign in as your users"
	if s.User != "" {
		w += "; the user name and password are still only sent over TLS, so without STARTTLS delivery fails"
	}
	return w
}

// redact replaces the userinfo of a server URL, parsed or not, with ***:
// everything between "://" (or "smtp:", or the start) and the last "@".
// Taking the last "@" leaves no piece of a password that holds an
// unescaped "@", "/" or "#", at the price of hiding a little more of a URL
// that is wrong anyway.
func redact(raw string) string {
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return raw
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		start = i + 3
	} else if scheme, _, ok := strings.Cut(raw, ":"); ok && (strings.EqualFold(scheme, "smtp") || strings.EqualFold(scheme, "smtps")) {
		start = len(scheme) + 1
	}
	return raw[:start] + "***" + raw[at:]
}
