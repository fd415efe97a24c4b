package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// target is one URL under load, with the cookies a client sends to it.
type target struct {
	Key    string // bare, jwt, database, database-pg, nocookie, csrf
	Name   string // as printed
	URL    string
	Cookie string // the Cookie header, "" for none
	Proc   *proc  // the process answering
	Goal   float64
	// Floor marks a reference run, not latchkey: no goal, shown for what
	// it tells about the targets (e.g. what net/http charges for a header set).
	Floor bool
	check func(body []byte) error // judges one answer's body (status 200 is checked first)
	// header, when set, judges the answer's headers too.
	header func(http.Header) error

	// Headers are sent beside Cookie, e.g. "Authorization: Bearer …".
	Headers []string
	// Script is a wrk Lua script (a file) for what -H cannot say: a POST,
	// its body, a new request each time; ScriptArgs follow wrk's "--".
	Script     string
	ScriptArgs []string
	// prepare, when set, runs before each wrk run (e.g. fresh refresh
	// tokens for the script to rotate).
	prepare func() error
	// request, when set, is the request verify sends (one like wrk's);
	// otherwise a GET of URL with Cookie and Headers.
	request func() (*http.Request, error)
}

// p99Goal is the latency goal: p99 at most 1.5 times the bare handler's.
const p99Goal = 1.5

// verify sends one request as wrk will and checks the answer.
func (t *target) verify() error {
	newRequest := t.request
	if newRequest == nil {
		newRequest = t.get
	}
	req, err := newRequest()
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %s answered %d: %s", t.Name, req.Method, t.URL, res.StatusCode, body)
	}
	if err := t.check(body); err != nil {
		return fmt.Errorf("%s: %s %s: %w", t.Name, req.Method, t.URL, err)
	}
	if t.header != nil {
		if err := t.header(res.Header); err != nil {
			return fmt.Errorf("%s: %s %s: %w", t.Name, req.Method, t.URL, err)
		}
	}
	return nil
}

// ready runs prepare, if any: before each wrk run, and before the server's
// CPU time is read for it.
func (t *target) ready() error {
	if t.prepare == nil {
		return nil
	}
	if err := t.prepare(); err != nil {
		return fmt.Errorf("%s: prepare: %w", t.Name, err)
	}
	return nil
}

// get is the GET of URL that wrk sends without a script: Cookie and Headers.
func (t *target) get() (*http.Request, error) {
	req, err := http.NewRequest(http.MethodGet, t.URL, nil)
	if err != nil {
		return nil, err
	}
	if t.Cookie != "" {
		req.Header.Set("Cookie", t.Cookie)
	}
	for _, h := range t.Headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	return req, nil
}

// headerShape is an answer's header names, each with its number of values
// (Set-Cookie×2), sorted.
func headerShape(url string) (string, error) {
	res, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return shapeOf(res.Header), nil
}

func shapeOf(h http.Header) string {
	var names []string
	for k, v := range h {
		names = append(names, fmt.Sprintf("%s×%d", k, len(v)))
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}

// shapeIs accepts headers of the same names and numbers of values as want.
func shapeIs(want string) func(http.Header) error {
	return func(h http.Header) error {
		if got := shapeOf(h); got != want {
			return fmt.Errorf("headers %s, but the reference sends %s", got, want)
		}
		return nil
	}
}

// emptyObject accepts {} (a signed-out session, the bare handler).
func emptyObject(body []byte) error {
	if s := string(bytes.TrimSpace(body)); s != "{}" {
		return fmt.Errorf("want {}, got %q", s)
	}
	return nil
}

// signedInAs accepts a session object of the user with address addr.
// noBody: forward-auth answers 200 with the user in headers and no body.
func noBody(body []byte) error {
	if len(body) != 0 {
		return fmt.Errorf("want no body, got %q", body)
	}
	return nil
}

// remoteEmail: forward-auth names the signed-in user in Remote-Email.
func remoteEmail(addr string) func(http.Header) error {
	return func(h http.Header) error {
		if got := h.Get("Remote-Email"); got != addr {
			return fmt.Errorf("want Remote-Email %q, got %q", addr, got)
		}
		return nil
	}
}

func signedInAs(addr string) func([]byte) error {
	return func(body []byte) error {
		var s struct {
			User    struct{ Email string }
			Expires string
		}
		if err := json.Unmarshal(body, &s); err != nil {
			return fmt.Errorf("not a session object: %q", body)
		}
		if s.User.Email != addr || s.Expires == "" {
			return fmt.Errorf("not signed in as %s: %s", addr, body)
		}
		return nil
	}
}

// csrfToken accepts {"csrfToken": token}: the cookie sent was valid, so
// latchkey kept its token instead of issuing a new one.
func csrfToken(token string) func([]byte) error {
	return func(body []byte) error {
		var v struct{ CsrfToken string }
		if err := json.Unmarshal(body, &v); err != nil || v.CsrfToken != token {
			return fmt.Errorf("want the token of the cookie sent (%s), got %s", token, body)
		}
		return nil
	}
}

// client is a browser: a cookie jar, redirects not followed.
type client struct {
	p    *proc
	http *http.Client
}

func newClient(p *proc) *client {
	jar, _ := cookiejar.New(nil)
	return &client{p: p, http: &http.Client{
		Jar:           jar,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (c *client) do(req *http.Request, want int) (*http.Response, []byte, error) {
	res, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		return res, body, fmt.Errorf("%s %s answered %d, want %d: %s", req.Method, req.URL, res.StatusCode, want, body)
	}
	return res, body, nil
}

// csrf is the first half of the CSRF dance: the cookie lands in the jar,
// the token is returned.
func (c *client) csrf() (string, error) {
	req, _ := http.NewRequest(http.MethodGet, c.p.Origin+basePath+"/csrf", nil)
	_, body, err := c.do(req, http.StatusOK)
	if err != nil {
		return "", err
	}
	var v struct{ CsrfToken string }
	if err := json.Unmarshal(body, &v); err != nil || v.CsrfToken == "" {
		return "", fmt.Errorf("GET /csrf: no token in %q", body)
	}
	return v.CsrfToken, nil
}

// cookieHeader is what the browser sends to GET /session.
func (c *client) cookieHeader() string {
	u, _ := url.Parse(c.p.Origin + basePath + "/session")
	var parts []string
	for _, ck := range c.http.Jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return strings.Join(parts, "; ")
}

var linkRE = regexp.MustCompile(`https?://[^\s"]+/callback/email\?[^\s"]+`)

// signIn signs a browser in on p as addr the way a user does: the CSRF
// dance, the e-mail form, the link (written to p's log, as there is no SMTP
// server), opened in the same browser. It returns the browser's cookies.
func signIn(p *proc, addr string) (string, error) {
	c, err := signInClient(p, addr)
	if err != nil {
		return "", err
	}
	return c.cookieHeader(), nil
}

// signInClient is signIn's browser itself, its cookie jar signed in.
func signInClient(p *proc, addr string) (*client, error) {
	c := newClient(p)
	token, err := c.csrf()
	if err != nil {
		return nil, err
	}
	mark := len(p.logs.String())
	form := url.Values{"csrfToken": {token}, "email": {addr}, "callbackUrl": {p.Origin + "/"}}
	req, _ := http.NewRequest(http.MethodPost, p.Origin+basePath+"/signin/email", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if _, _, err := c.do(req, http.StatusFound); err != nil {
		return nil, fmt.Errorf("request the link: %w", err)
	}
	var link string
	for deadline := time.Now().Add(10 * time.Second); link == "" && time.Now().Before(deadline); {
		for _, line := range strings.Split(p.logs.String()[mark:], "\n") {
			// The link names its address (the log line itself masks it).
			if strings.Contains(line, "email="+url.QueryEscape(addr)) {
				link = linkRE.FindString(line)
			}
		}
		if link == "" {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if link == "" {
		return nil, fmt.Errorf("no sign-in link for %s in the log of %s:\n%s", addr, p.Name, p.logs)
	}
	req, _ = http.NewRequest(http.MethodGet, link, nil)
	res, _, err := c.do(req, http.StatusFound)
	if err != nil {
		return nil, fmt.Errorf("open the link: %w", err)
	}
	if loc := res.Header.Get("Location"); loc != p.Origin+"/" {
		return nil, fmt.Errorf("the link redirected to %q, not the callbackUrl (sign-in failed)", loc)
	}
	return c, nil
}

// csrfHolder is a client that has been to GET /csrf once: its cookies and token.
func csrfHolder(p *proc) (cookie, token string, err error) {
	c := newClient(p)
	token, err = c.csrf()
	return c.cookieHeader(), token, err
}
