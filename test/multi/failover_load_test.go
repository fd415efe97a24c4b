package multi_test

// The fail-over test's load and its record: browsers that read their
// session, sign in by e-mail and sign out through the proxy, every answer
// kept with its time and judged against the answers the issue allows.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/latchkey-auth/latchkey/app/email/smtptest"
)

// loadTimeout is every load request's limit: an answer slower than this is
// a hang, and counts as a failure.
const loadTimeout = 20 * time.Second

// Classes of answers.
const (
	classOK   = "ok"  // the normal answer (200 with the user, the usual 302)
	class503  = "503" // 503 with Retry-After: the documented "try again"
	classBad  = "bad" // anything else, a transport error or a time-out included
	opSession = "GET /session"
	opCSRF    = "GET /csrf"
	opSignIn  = "POST /signin/email"
	opMail    = "sign-in e-mail"
	opLink    = "GET /callback/email"
	opSignOut = "POST /signout"
)

// answer is one request and what came back.
type answer struct {
	op         string
	who        string // the browser's address
	sent, done time.Time
	status     int
	retryAfter string
	location   string
	body       string // the start of it
	err        string // a transport error or time-out
	class      string
	why        string // for classBad: what was wrong
}

func (a answer) String() string {
	s := fmt.Sprintf("%s %s %s (%s): ", a.sent.Format("15:04:05.000"), a.op, a.who, a.done.Sub(a.sent).Round(time.Millisecond))
	if a.err != "" {
		return s + "error " + a.err
	}
	s += fmt.Sprintf("%d", a.status)
	if a.retryAfter != "" {
		s += " Retry-After " + a.retryAfter
	}
	if a.location != "" {
		s += " → " + a.location
	}
	if a.why != "" {
		s += " [" + a.why + "]"
	}
	if a.class == classBad && a.body != "" {
		s += " body " + a.body
	}
	return s
}

// write reports whether the answer is a write that went through.
func (a answer) write() bool {
	return a.class == classOK && (a.op == opSignIn || a.op == opLink || a.op == opSignOut)
}

// record keeps every answer; the load's goroutines add to it.
type record struct {
	mu      sync.Mutex
	answers []answer
	flows   []*flow
}

func (r *record) add(a answer) answer {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers = append(r.answers, a)
	return a
}

func (r *record) addFlow(f *flow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flows = append(r.flows, f)
}

// snapshot is a copy of the answers so far.
func (r *record) snapshot() []answer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]answer(nil), r.answers...)
}

func (r *record) allFlows() []*flow {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*flow(nil), r.flows...)
}

// signedInSince reports whether an e-mail sign-in sent after t succeeded.
func (r *record) signedInSince(t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.answers {
		if a.op == opLink && a.class == classOK && !a.sent.Before(t) {
			return true
		}
	}
	return false
}

// flow is one e-mail sign-in by a fresh browser, and its sign-out.
type flow struct {
	addr    string
	br      *browser
	link    string // "" when no link was mailed
	clicked answer // the link's first click
	cookie  string // the session cookie the click set (classOK)
	signOut *answer
}

// mailbox finds sign-in links in the SMTP catcher's mails, parsing each
// mail once.
type mailbox struct {
	smtp  *smtptest.Server
	mu    sync.Mutex
	seen  int
	links map[string]string
}

func newMailbox(s *smtptest.Server) *mailbox {
	return &mailbox{smtp: s, links: map[string]string{}}
}

// wait returns addr's link, or "" when none came within limit.
func (m *mailbox) wait(addr string, limit time.Duration) string {
	deadline := time.Now().Add(limit)
	for {
		if link := m.find(addr); link != "" || time.Now().After(deadline) {
			return link
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (m *mailbox) find(addr string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	mails := m.smtp.Mails()
	for _, mail := range mails[m.seen:] {
		if len(mail.To) != 1 {
			continue
		}
		if p, err := smtptest.Parse(mail.Data); err == nil {
			if link := linkRE.FindString(p.Text); link != "" {
				m.links[mail.To[0]] = link
			}
		}
	}
	m.seen = len(mails)
	return m.links[addr]
}

// loadBrowser is a browser whose requests give up after loadTimeout.
func (c *cluster) loadBrowser() *browser {
	b := c.browser()
	b.client.Timeout = loadTimeout
	return b
}

// send makes one request for the load and judges the answer with judge,
// which sets class and why from the rest.
func (r *record) send(b *browser, op, who, method, target string, form url.Values, judge func(*answer)) answer {
	a := answer{op: op, who: who, sent: time.Now()}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err == nil {
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		var res resp
		res, err = b.do(req)
		if err == nil {
			a.status = res.StatusCode
			a.retryAfter = res.Header.Get("Retry-After")
			a.location = res.location()
			a.body = res.body
		}
	}
	a.done = time.Now()
	if err != nil {
		a.err = err.Error()
		a.class, a.why = classBad, "no answer"
		return r.add(a)
	}
	switch {
	case a.status == http.StatusServiceUnavailable && a.retryAfter != "":
		a.class = class503
	case a.status == http.StatusServiceUnavailable:
		a.class, a.why = classBad, "503 without Retry-After"
	default:
		judge(&a)
	}
	if len(a.body) > 300 {
		a.body = a.body[:300] + "…"
	}
	return r.add(a)
}

// expect makes a judge: the answer is fine when ok says so.
func expect(ok func(*answer) (bool, string)) func(*answer) {
	return func(a *answer) {
		if good, why := ok(a); good {
			a.class = classOK
		} else {
			a.class, a.why = classBad, why
		}
	}
}

// readSession is GET /session through the proxy for a browser signed in
// as addr: the user, or a 503 with Retry-After; never {}.
func (c *cluster) readSession(r *record, b *browser, addr string) answer {
	return r.send(b, opSession, addr, http.MethodGet, c.publicURL("/session"), nil, expect(func(a *answer) (bool, string) {
		if a.status != http.StatusOK {
			return false, "not 200"
		}
		var s map[string]any
		if err := json.Unmarshal([]byte(a.body), &s); err != nil {
			return false, "not JSON"
		}
		if got := userEmail(s); got != addr {
			return false, fmt.Sprintf("signed-in browser answered as %q", got)
		}
		return true, ""
	}))
}

// csrfToken is GET /csrf through the proxy; "" when it failed.
func (c *cluster) csrfToken(r *record, b *browser, who string) string {
	var token string
	r.send(b, opCSRF, who, http.MethodGet, c.publicURL("/csrf"), nil, expect(func(a *answer) (bool, string) {
		var v struct{ CsrfToken string }
		if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &v) != nil || v.CsrfToken == "" {
			return false, "no token"
		}
		token = v.CsrfToken
		return true, ""
	}))
	return token
}

// signInFlow is one e-mail sign-in through the proxy by a fresh browser:
// the form, the mail, the link. Nothing is retried: what a 503 left
// behind is checked afterwards.
func (c *cluster) signInFlow(r *record, mb *mailbox, addr string) *flow {
	f := &flow{addr: addr, br: c.loadBrowser()}
	token := c.csrfToken(r, f.br, addr)
	if token == "" {
		return nil
	}
	form := url.Values{"csrfToken": {token}, "email": {addr}, "callbackUrl": {c.origin() + "/home"}}
	verify := c.publicURL("/verify-request?provider=email&type=email")
	a := r.send(f.br, opSignIn, addr, http.MethodPost, c.publicURL("/signin/email"), form, expect(func(a *answer) (bool, string) {
		return a.status == http.StatusFound && a.location == verify, "not the verify-request page"
	}))
	if a.class != classOK {
		return nil
	}
	r.addFlow(f)
	sent := time.Now()
	f.link = mb.wait(addr, loadTimeout)
	if f.link == "" {
		r.add(answer{op: opMail, who: addr, sent: sent, done: time.Now(), class: classBad, why: "the form said the link was sent; no mail came"})
		return f
	}
	f.clicked = r.send(f.br, opLink, addr, http.MethodGet, f.link, nil, expect(func(a *answer) (bool, string) {
		if a.status != http.StatusFound || a.location != c.origin()+"/home" {
			return false, "not the redirect to callbackUrl"
		}
		if f.br.cookie(sessionCookie) == "" {
			return false, "no session cookie"
		}
		return true, ""
	}))
	if f.clicked.class == classOK {
		f.cookie = f.br.cookie(sessionCookie)
	}
	return f
}

// signOutFlow signs f's browser out through the proxy.
func (c *cluster) signOutFlow(r *record, f *flow) {
	token := c.csrfToken(r, f.br, f.addr)
	if token == "" {
		return
	}
	a := r.send(f.br, opSignOut, f.addr, http.MethodPost, c.publicURL("/signout"), url.Values{"csrfToken": {token}}, expect(func(a *answer) (bool, string) {
		if a.status != http.StatusFound || strings.Contains(a.location, "error=") {
			return false, "not the sign-out redirect"
		}
		return true, ""
	}))
	f.signOut = &a
}

// runLoad runs the load until stop is closed: readers, each a browser
// signed in as readers[i] reading its session, and signers, each signing
// fresh browsers in by e-mail and every other one out again.
func (c *cluster) runLoad(r *record, mb *mailbox, readers map[string]*browser, signers int, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for addr, b := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stopped(stop) {
				c.readSession(r, b, addr)
				pause(stop, 50*time.Millisecond)
			}
		}()
	}
	for w := range signers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; !stopped(stop); k++ {
				f := c.signInFlow(r, mb, fmt.Sprintf("w%d-%d@example.com", w, k))
				if f != nil && f.cookie != "" {
					c.readSession(r, f.br, f.addr)
					if k%2 == 0 {
						c.signOutFlow(r, f)
					}
				}
				pause(stop, 100*time.Millisecond)
			}
		}()
	}
	return &wg
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

func pause(stop <-chan struct{}, d time.Duration) {
	select {
	case <-stop:
	case <-time.After(d):
	}
}
