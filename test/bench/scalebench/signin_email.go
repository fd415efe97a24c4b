package main

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/latchkey-auth/latchkey/app/email/smtptest"
	"github.com/latchkey-auth/latchkey/models/scalefill"
)

// mailbox hands each sign-in e-mail's link, received by the bench's SMTP
// server, to the round trip waiting for that address.
type mailbox struct {
	mu      sync.Mutex
	waiting map[string]chan string // address → its link
}

func newMailbox() *mailbox { return &mailbox{waiting: map[string]chan string{}} }

var linkRE = regexp.MustCompile(`https?://\S+/callback/email\?\S+`)

// deliver is the SMTP server's OnMail: the link goes to whoever waits for
// the address; a message nobody waits for is dropped.
func (m *mailbox) deliver(mail smtptest.Mail) {
	if len(mail.To) != 1 {
		return
	}
	m.mu.Lock()
	ch := m.waiting[strings.ToLower(mail.To[0])]
	m.mu.Unlock()
	if ch == nil {
		return
	}
	link := ""
	if p, err := smtptest.Parse(mail.Data); err == nil {
		link = linkRE.FindString(p.Text)
	}
	select {
	case ch <- link:
	default:
	}
}

// expect registers a wait for addr's link; done removes it.
func (m *mailbox) expect(addr string) (link <-chan string, done func()) {
	ch := make(chan string, 1)
	m.mu.Lock()
	m.waiting[addr] = ch
	m.mu.Unlock()
	return ch, func() {
		m.mu.Lock()
		delete(m.waiting, addr)
		m.mu.Unlock()
	}
}

// emailSignIn is the e-mail link round trip: GET csrf, POST
// /signin/email for a filled user, the link from the SMTP server, GET
// the link. Client w only takes users i ≡ w (mod conns), so no two
// clients wait for the same address at once.
func emailSignIn(box *mailbox, users, conns int) signInFlow {
	return func(w int, b *browser) (string, error) {
		i := w + conns*rand.IntN(max(1, users/conns))
		if i >= users {
			i = w % users
		}
		addr := scalefill.Email(i)
		link, done := box.expect(addr)
		defer done()
		token, err := b.csrf()
		if err != nil {
			return "", err
		}
		if _, err := b.post(b.base+"/signin/email", url.Values{"csrfToken": {token}, "email": {addr}}); err != nil {
			return "", err
		}
		select {
		case l := <-link:
			if l == "" {
				return "", fmt.Errorf("the e-mail to %s holds no sign-in link", addr)
			}
			return addr, b.finish(l)
		case <-time.After(10 * time.Second):
			return "", fmt.Errorf("no e-mail to %s within 10 s", addr)
		}
	}
}
