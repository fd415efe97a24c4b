package email

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	mail "github.com/wneessen/go-mail"
	"golang.org/x/net/idna"

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
	// Name (?name=mail.example.com, nodemailer's option of that name) is
	// what latchkey calls itself in EHLO/HELO; "" means
	// SMTPOptions.Hello.
	Name string
}

// ParseServer reads smtp://[user:pass@]host[:port][?insecure=true][&name=HOST]
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
	if s.Insecure, s.Name, err = queryOptions(u.RawQuery); err != nil {
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

// queryOptions reads the query: insecure and name, each at most once.
// Anything else is refused rather than ignored: a nodemailer option such
// as tls.rejectUnauthorized would otherwise seem to work. Keys and values
// are not quoted: with an unescaped ? in a password, they hold part of it.
func queryOptions(rawQuery string) (insecure bool, name string, err error) {
	if rawQuery == "" {
		return false, "", nil
	}
	rule := errors.New("the query options are ?insecure=true and ?name=HOST (in the password, write ? as %3F)")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return false, "", rule
	}
	for k, v := range q {
		if (k != "insecure" && k != "name") || len(v) != 1 {
			return false, "", rule
		}
	}
	if v, ok := q["insecure"]; ok {
		switch v[0] {
		case "true":
			insecure = true
		case "false":
		default:
			return false, "", errors.New("insecure must be true or false")
		}
	}
	if v, ok := q["name"]; ok {
		if name, ok = helloName(v[0]); !ok {
			return false, "", errors.New("name (what latchkey says in EHLO) must be a host name like mail.example.com or an address literal like [192.0.2.1]")
		}
	}
	return insecure, name, nil
}

// helloName is an EHLO/HELO name as RFC 5321 has it, a domain (in ASCII,
// an IDN converted) or an address literal ([192.0.2.1], [IPv6:2001:db8::1]);
// ok is false for anything else.
func helloName(s string) (string, bool) {
	if inner, ok := strings.CutPrefix(s, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		v6, isV6 := strings.CutPrefix(inner, "IPv6:")
		ip := net.ParseIP(v6)
		return s, ok && ip != nil && isV6 == (ip.To4() == nil)
	}
	a, err := idna.Lookup.ToASCII(s)
	if err != nil || len(a) > 253 || !domainName.MatchString(a) {
		return "", false
	}
	return a, true
}

var domainName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// HelloName is what latchkey calls itself in EHLO/HELO by default: the
// service's host name (SERVICE_URL's, in ASCII), or for an IP address its
// address literal; "localhost" when it is neither. Not go-mail's default,
// this machine's host name: in a container that is its id, elsewhere often
// an internal name, and relays that want a fully qualified name refuse it.
func HelloName(host string) string {
	if ip := net.ParseIP(host); ip != nil {
		if ip.To4() != nil {
			return "[" + ip.String() + "]"
		}
		return "[IPv6:" + ip.String() + "]"
	}
	if n, ok := helloName(host); ok {
		return n
	}
	return "localhost"
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
