package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"
)

// sessionCookie is the database session's cookie (next-auth v4 name, http).
const sessionCookie = "next-auth.session-token"

// signInFlow is one sign-in round trip by client w in browser b, a fresh
// cookie jar, at latchkey's base URL; it returns the address it signed in
// as once b holds a session cookie.
type signInFlow func(w int, b *browser) (email string, err error)

// signIns checks that one round trip of flow really signs in (GET
// /session answers its user), then runs it with o.SignInConns clients
// for o.Duration, each round trip in a fresh browser.
func signIns(o options, base string, m cpuMeter, name string, flow signInFlow) (stat, error) {
	b := newBrowser(http.DefaultTransport, base)
	email, err := flow(0, b)
	if err != nil {
		return stat{}, err
	}
	if err := b.signedInAs(email); err != nil {
		return stat{}, err
	}
	return m.measure(name, func() stat {
		stop := make(chan struct{})
		time.AfterFunc(o.Duration, func() { close(stop) })
		return runOps(o.SignInConns, stop, func(w int, tr http.RoundTripper) error {
			_, err := flow(w, newBrowser(tr, base))
			return err
		})
	}), nil
}

// browser is one sign-in's client: its own cookies, redirects not
// followed, so that every hop is checked.
type browser struct {
	*http.Client
	base string // latchkey's base URL (SERVICE_URL)
}

func newBrowser(tr http.RoundTripper, base string) *browser {
	jar, _ := cookiejar.New(nil) // never fails without options
	return &browser{&http.Client{Transport: tr, Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}, base}
}

// send does req and returns its status, Location and body.
func (b *browser) send(req *http.Request) (status int, location, body string, err error) {
	res, err := b.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", "", fmt.Errorf("%s %s: read body: %w", req.Method, req.URL.Path, err)
	}
	return res.StatusCode, res.Header.Get("Location"), string(raw), nil
}

// get is GET target answered want; it returns the Location and body.
func (b *browser) get(target string, want int) (location, body string, err error) {
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return "", "", err
	}
	status, location, body, err := b.send(req)
	if err == nil && status != want {
		err = fmt.Errorf("GET %s: %d, want %d: %.200s", req.URL.Path, status, want, body)
	}
	return location, body, err
}

// post is the form posted to target and answered with a redirect; it
// returns the Location.
func (b *browser) post(target string, form url.Values) (string, error) {
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	status, location, body, err := b.send(req)
	if err == nil && status != http.StatusFound {
		err = fmt.Errorf("POST %s: %d, want 302: %.200s", req.URL.Path, status, body)
	}
	return location, err
}

// csrf is GET {base}/csrf: the cookie lands in the jar, the token is returned.
func (b *browser) csrf() (string, error) {
	_, body, err := b.get(b.base+"/csrf", http.StatusOK)
	if err != nil {
		return "", err
	}
	var v struct {
		CsrfToken string `json:"csrfToken"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.CsrfToken == "" {
		return "", fmt.Errorf("GET /csrf: no token in %.200s", body)
	}
	return v.CsrfToken, nil
}

// finish is the last hop of a sign-in: GET target (a callback) answered
// with a redirect that sets the session cookie.
func (b *browser) finish(target string) error {
	location, _, err := b.get(target, http.StatusFound)
	if err != nil {
		return err
	}
	if !b.hasSession() {
		return fmt.Errorf("GET %s: no session cookie (redirected to %s)", target, location)
	}
	return nil
}

func (b *browser) hasSession() bool {
	u, err := url.Parse(b.base)
	if err != nil {
		return false
	}
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == sessionCookie && c.Value != "" {
			return true
		}
	}
	return false
}

// signedInAs checks that GET {base}/session answers the user of email.
func (b *browser) signedInAs(email string) error {
	_, body, err := b.get(b.base+"/session", http.StatusOK)
	if err != nil {
		return err
	}
	var s struct {
		User struct{ Email string } `json:"user"`
	}
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		return fmt.Errorf("GET /session: %w: %.200s", err, body)
	}
	if s.User.Email != email {
		return fmt.Errorf("GET /session: signed in as %q, want %s: %.200s", s.User.Email, email, body)
	}
	return nil
}
