package email_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/email"
)

// Malformed server URLs carrying the password "s3cr3t-pass": each must be
// refused with a message that shows the host but not the userinfo, whether
// url.Parse fails (its error quotes the whole string), succeeds with no
// userinfo it knows of (Redacted keeps everything), or succeeds with it.
var malformedServers = []string{
	"smtp://user:s3cr3t-pass@smtp.example.com:587%zz", // url.Parse fails
	"smtp://user:s3cr3t-pass@smtp.exa\x01mple.com",    // control character: url.Parse fails
	"smtp://user:s3cr3t-pass#@smtp.example.com",       // unescaped #: url.Parse fails on port "s3cr3t-pass"
	"smtp:user:s3cr3t-pass@smtp.example.com",          // no //: an opaque URL, no userinfo to redact
	"smtp://user:1234/s3cr3t-pass@smtp.example.com",   // unescaped /: host "user", port 1234, the rest a path
	"smtp://s3cr3t-pass@smtp.example.com:99999",       // a token as the user name, bad port
	"smtp://user:s3cr3t-pass@smtp.example.com:99999",  // parsed userinfo, bad port
	"smtp://user:s3cr3t-pass@smtp.example.com:587/x",  // parsed userinfo, a path
	"http://user:s3cr3t-pass@smtp.example.com",        // parsed userinfo, wrong scheme
}

func TestNewSMTPErrorsHideUserinfo(t *testing.T) {
	for _, server := range malformedServers {
		t.Run(server, func(t *testing.T) {
			_, err := email.NewSMTP(server, email.SMTPOptions{})
			require.Error(t, err)
			require.NotContains(t, err.Error(), "s3cr3t-pass")
			require.Contains(t, err.Error(), "***@smtp.exa", "the host stays, the userinfo is ***")
		})
	}
}

func TestParseServerName(t *testing.T) {
	for q, want := range map[string]string{
		"?name=mail.example.com":               "mail.example.com",
		"?name=MAIL.Example.COM&insecure=true": "mail.example.com",
		"?name=b%C3%BCcher.example":            "xn--bcher-kva.example",
		"?name=%5BIPv6:2001:db8::1%5D":         "[IPv6:2001:db8::1]",
		"?name=localhost":                      "localhost",
	} {
		s, err := email.ParseServer("smtp://smtp.example.com" + q)
		require.NoError(t, err, q)
		require.Equal(t, want, s.Name, q)
	}
	for _, q := range []string{"?name=", "?name=a%20b", "?name=a_b.example", "?name=-a.example", "?name=a.example.",
		"?name=%5B192.0.2%5D", "?name=%5B2001:db8::1%5D", "?name=%5BIPv6:192.0.2.1%5D", "?name=a&name=b", "?helo=a.example"} {
		_, err := email.ParseServer("smtp://user:s3cr3t-pass@smtp.example.com" + q)
		require.Error(t, err, q)
		require.NotContains(t, err.Error(), "s3cr3t-pass")
	}
}

func TestHelloName(t *testing.T) {
	for host, want := range map[string]string{
		"auth.example.com": "auth.example.com", "127.0.0.1": "[127.0.0.1]", "::1": "[IPv6:::1]",
		"localhost": "localhost", "a_b.example": "localhost", "": "localhost",
	} {
		require.Equal(t, want, email.HelloName(host), host)
	}
}
