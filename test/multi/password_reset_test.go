package multi_test

import (
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/models/pgtest"
)

// A password reset finished on one instance ends the user's sessions on
// every instance, a copy of the cookie included (database sessions at
// once, jwt ones within the poll), keeps another user's, and the new
// password then signs in through the other instance.
func TestPasswordResetEndsSessionsEverywhere(t *testing.T) {
	for _, strategy := range []string{"database", "jwt"} {
		t.Run(strategy, func(t *testing.T) {
			c := newCluster(t, pgtest.NewDatabase(t, adminURL))
			raw, err := os.ReadFile(c.config)
			require.NoError(t, err)
			withCredentials := strings.Replace(string(raw), "callbacks:\n", "  - type: credentials\ncallbacks:\n", 1)
			require.NoError(t, os.WriteFile(c.config, []byte(withCredentials), 0o600))
			c.appendConfig("session:\n  strategy: " + strategy + "\n  revocation_poll: " + poll.String() + "\n")
			c.nodes = c.launchAll(2)
			for _, in := range c.nodes {
				in.waitReady(t)
			}
			a, b := c.nodes[0], c.nodes[1]

			ann, bob := c.browser(), c.browser()
			c.signInByEmail(ann, a, "ann@example.com")
			c.signInByEmail(bob, b, "bob@example.com")
			stolen := c.sessionCookieCopy(ann)
			require.Equal(t, "ann@example.com", stolen.email(b))

			asker := c.browser()
			before := len(c.mailsTo("ann@example.com"))
			r := asker.post(b.url("/reset"), url.Values{"csrfToken": {asker.csrf(b)}, "email": {"ann@example.com"}})
			require.Equal(t, http.StatusOK, r.StatusCode, r.body)
			require.Eventually(t, func() bool { return len(c.mailsTo("ann@example.com")) > before }, patience, 10*time.Millisecond)
			p, err := smtptest.Parse(c.mailsTo("ann@example.com")[before].Data)
			require.NoError(t, err)
			link := regexp.MustCompile(`https?://\S+/reset/confirm\?token=[0-9a-f]+`).FindString(p.Text)
			require.NotEmpty(t, link, p.Text)
			token := mustURL(t, link).Query().Get("token")

			const pw = "a long new passphrase for ann"
			r = asker.post(a.url("/reset/confirm"), url.Values{"csrfToken": {asker.csrf(a)}, "token": {token}, "password": {pw}})
			require.Equal(t, http.StatusOK, r.StatusCode, r.body)
			require.Contains(t, r.body, "Password changed")
			took := c.signedOutEverywhere(stolen)
			t.Logf("the copied session ended on both instances %s after the reset", took)
			c.signedOutEverywhere(ann)
			for _, in := range c.nodes {
				require.Equal(t, "bob@example.com", bob.email(in), "bob's session stays on %s", in.name)
			}

			again := c.browser()
			r = again.post(b.url("/callback/credentials"), url.Values{"csrfToken": {again.csrf(b)}, "email": {"ann@example.com"},
				"password": {pw}, "json": {"true"}, "callbackUrl": {c.origin() + "/home"}})
			require.Equal(t, http.StatusOK, r.StatusCode, r.body)
			for _, in := range c.nodes {
				require.Equal(t, "ann@example.com", again.email(in), "signed in with the new password, seen on %s", in.name)
			}
		})
	}
}
