package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
)

// RemoteOptions configure a [Remote]. Only URL is required.
type RemoteOptions struct {
	// URL is latchkey's base URL as this backend reaches it, e.g.
	// "http://latchkey:3000/api/auth" (SERVICE_URL, or an internal address
	// with the same path). GET {URL}/session is asked.
	URL string
	// CookieNames are the session cookies forwarded (with their chunks
	// name.0, name.1 …); every other cookie of the request stays here.
	// Default: DefaultCookieNames().
	CookieNames []string
	// Timeout bounds one lookup, connection included. Default 2 s.
	Timeout time.Duration
	// CacheTTL is how long a signed-in answer is reused (never past the
	// session's expiry): a sign-out on latchkey is seen at most this late.
	// Default 5 s; negative: no cache.
	CacheTTL time.Duration
	// NegativeCacheTTL is the same for "signed out" answers. Default 1 s;
	// negative: not cached.
	NegativeCacheTTL time.Duration
	// CacheSize bounds the cached answers (least recently used go first).
	// Default 4096.
	CacheSize int
	// HTTPClient sends the lookups. Default: a client of its own that
	// follows no redirect. Its own Timeout, if any, applies as well.
	HTTPClient *http.Client
	// TokenSecret is latchkey's tokens.client_secret, which AccessToken
	// sends as its bearer token; "" when this backend reaches latchkey
	// through one of its trusted_proxies instead.
	TokenSecret string
	// TokenTimeout bounds one AccessToken call, which may wait for a
	// refresh at the provider. Default 20 s.
	TokenTimeout time.Duration
}

// Remote resolves sessions by asking latchkey's GET /session. It works with
// both session strategies. Safe for concurrent use.
//
// The cookies latchkey sets in its answers stay with the backend: a database
// session is still extended (on latchkey's side), but a jwt-strategy cookie
// is re-issued only when the browser itself calls GET /session, as the
// next-auth client does.
type Remote struct {
	base     string // latchkey's base URL, no trailing slash
	endpoint string
	names    []string
	timeout  time.Duration
	client   *http.Client
	cache    *cache // nil: no cache
	flights  singleflight.Group
	// tokenSecret and tokenTimeout are AccessToken's (RemoteOptions).
	tokenSecret  string
	tokenTimeout time.Duration
}

// Defaults of RemoteOptions.
const (
	defaultTimeout   = 2 * time.Second
	defaultTTL       = 5 * time.Second
	defaultNegTTL    = time.Second
	defaultCacheSize = 4096
	// maxAnswer bounds the /session body read: real ones are under 1 KiB.
	maxAnswer = 64 << 10
)

// NewRemote checks o and builds a Remote.
func NewRemote(o RemoteOptions) (*Remote, error) {
	u, err := url.Parse(o.URL)
	if err != nil || !isHTTP(u) || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("client: RemoteOptions.URL must be latchkey's absolute http(s) base URL, e.g. http://latchkey:3000/api/auth")
	}
	base := strings.TrimSuffix(u.String(), "/")
	rm := &Remote{
		base:     base,
		endpoint: base + "/session",
		names:    o.CookieNames,
		timeout:  o.Timeout,
		client:   o.HTTPClient,

		tokenSecret:  o.TokenSecret,
		tokenTimeout: o.TokenTimeout,
	}
	if rm.tokenTimeout <= 0 {
		rm.tokenTimeout = defaultTokenTimeout
	}
	if len(rm.names) == 0 {
		rm.names = DefaultCookieNames()
	}
	if rm.timeout <= 0 {
		rm.timeout = defaultTimeout
	}
	if rm.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 32 // every request of this backend may ask
		rm.client = &http.Client{
			Transport:     t,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	ttl, negTTL, size := orDefault(o.CacheTTL, defaultTTL), orDefault(o.NegativeCacheTTL, defaultNegTTL), o.CacheSize
	if size <= 0 {
		size = defaultCacheSize
	}
	if ttl > 0 || negTTL > 0 {
		if rm.cache, err = newCache(size, ttl, negTTL, time.Now); err != nil {
			return nil, fmt.Errorf("client: cache: %w", err)
		}
	}
	return rm, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// User implements Resolver: no session cookie means nobody, with no request
// to latchkey; otherwise a cached answer, else one lookup shared by every
// request carrying the same cookies at that moment.
func (rm *Remote) User(r *http.Request) (*User, error) {
	header := sessionCookieHeader(r, rm.names)
	if header == "" {
		return nil, nil
	}
	k := keyOf(header)
	if rm.cache != nil {
		if u, ok := rm.cache.get(k); ok {
			return u.copy(), nil
		}
	}
	ch := rm.flights.DoChan(string(k[:]), func() (any, error) {
		u, err := rm.ask(header)
		if err == nil && rm.cache != nil {
			rm.cache.put(k, u)
		}
		return u, err
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*User).copy(), nil
	case <-r.Context().Done():
		return nil, fmt.Errorf("client: session lookup abandoned: %w", r.Context().Err())
	}
}

// copy keeps callers from changing a cached user; nil stays nil.
func (u *User) copy() *User {
	if u == nil {
		return nil
	}
	c := *u
	return &c
}

// sessionAnswer is GET /session's body: {} or the session object.
type sessionAnswer struct {
	User *struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Email string `json:"email"`
		Image string `json:"image"`
	} `json:"user"`
	Expires string `json:"expires"`
}

// ask sends one GET /session with the session cookies. Its time-out is its
// own, not the first caller's: the answer is shared.
func (rm *Remote) ask(cookieHeader string) (*User, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rm.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rm.endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("client: session lookup: %w", err)
	}
	req.Header.Set("Cookie", cookieHeader)
	req.Header.Set("Accept", "application/json")
	res, err := rm.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: session lookup: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("client: session lookup: latchkey answered %d", res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("client: session lookup: read answer: %w", err)
	}
	if len(body) > maxAnswer {
		return nil, errors.New("client: session lookup: answer too large")
	}
	var a sessionAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, errors.New("client: session lookup: answer is not a session object")
	}
	if a.User == nil {
		return nil, nil
	}
	expires, err := time.Parse(time.RFC3339Nano, a.Expires)
	if err != nil {
		return nil, errors.New("client: session lookup: answer has no valid expires")
	}
	if !expires.After(time.Now()) {
		return nil, nil
	}
	return &User{ID: a.User.ID, Email: a.User.Email, Name: a.User.Name, Image: a.User.Image, Expires: expires}, nil
}
