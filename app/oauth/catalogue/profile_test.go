package catalogue

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// idpClient returns a client that sends every request, whatever its host, to
// a local TLS server running h, so goth's real profile URLs (api.github.com,
// gitlab.com, ...) reach the test. h sees the original Host.
func idpClient(t *testing.T, h http.HandlerFunc) *http.Client {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	addr := srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig.ServerName = "example.com" // the name in httptest's certificate
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

func buildWith(t *testing.T, id string, hc *http.Client) *Provider {
	t.Helper()
	cfg := fakeConfig(id)
	cfg.HTTPClient = hc
	p, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

func TestProfileGitHub(t *testing.T) {
	hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer gho_test" {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		switch r.Host + r.URL.Path {
		case "api.github.com/user":
			writeJSON(w, `{"id": 42, "login": "octocat", "name": "", "email": null, "avatar_url": "https://avatars.example/42"}`)
		case "api.github.com/user/emails":
			writeJSON(w, `[{"email": "other@example.com", "primary": false, "verified": true},
				{"email": "Octo@Example.COM", "primary": true, "verified": true}]`)
		default:
			t.Errorf("unexpected request %s %s", r.Host, r.URL)
			http.NotFound(w, r)
		}
	})
	got, err := buildWith(t, "github", hc).Profile(t.Context(), &oauth2.Token{AccessToken: "gho_test"})
	if err != nil {
		t.Fatal(err)
	}
	want := Profile{ID: "42", Name: "octocat", Email: "octo@example.com", Image: "https://avatars.example/42"}
	if got.ID != want.ID || got.Name != want.Name || got.Email != want.Email || got.Image != want.Image {
		t.Errorf("Profile = %+v, want %+v", got, want)
	}
	if got.Raw["login"] != "octocat" {
		t.Errorf("Raw = %v", got.Raw)
	}
}

func TestProfileGitLab(t *testing.T) {
	hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Host+r.URL.Path != "gitlab.com/api/v4/user" || r.URL.Query().Get("access_token") != "glpat-test" {
			t.Errorf("unexpected request %s %s", r.Host, r.URL)
			http.NotFound(w, r)
			return
		}
		writeJSON(w, `{"id": 7, "username": "gl", "name": "Git Lab", "email": "GL@Example.com", "avatar_url": "https://gitlab.example/a.png"}`)
	})
	got, err := buildWith(t, "gitlab", hc).Profile(t.Context(), &oauth2.Token{AccessToken: "glpat-test", RefreshToken: "r", Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "7" || got.Name != "Git Lab" || got.Email != "gl@example.com" || got.Image != "https://gitlab.example/a.png" {
		t.Errorf("Profile = %+v", got)
	}
}

func TestProfileDiscord(t *testing.T) {
	hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Host+r.URL.Path != "discord.com/api/users/@me" || r.Header.Get("Authorization") != "Bearer dc-test" {
			t.Errorf("unexpected request %s %s", r.Host, r.URL)
			http.NotFound(w, r)
			return
		}
		writeJSON(w, `{"id": "80351110224678912", "username": "nelly", "avatar": "a_8342729096ea3675442027381ff50dfe", "email": "Nelly@Discord.com", "verified": true}`)
	})
	got, err := buildWith(t, "discord", hc).Profile(t.Context(), &oauth2.Token{AccessToken: "dc-test"})
	if err != nil {
		t.Fatal(err)
	}
	want := Profile{ID: "80351110224678912", Name: "nelly", Email: "nelly@discord.com",
		Image: "https://media.discordapp.net/avatars/80351110224678912/a_8342729096ea3675442027381ff50dfe.gif"}
	if got.ID != want.ID || got.Name != want.Name || got.Email != want.Email || got.Image != want.Image {
		t.Errorf("Profile = %+v, want %+v", got, want)
	}
}

// VK sends the e-mail only in the token response; goth keeps it in an
// unexported session field, so the catalogue copies it over.
func TestProfileVKEmailFromToken(t *testing.T) {
	hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, `{"response": [{"id": 1, "first_name": "Pavel", "last_name": "D", "photo_200": "https://vk.example/p.jpg"}]}`)
	})
	tok := (&oauth2.Token{AccessToken: "vk-test"}).WithExtra(map[string]any{"email": "Pavel@VK.com"})
	got, err := buildWith(t, "vk", hc).Profile(t.Context(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "1" || got.Name != "Pavel D" || got.Email != "pavel@vk.com" {
		t.Errorf("Profile = %+v", got)
	}
}

func TestProfileNeedsUserID(t *testing.T) {
	hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, `{"username": "no-id"}`) })
	if _, err := buildWith(t, "discord", hc).Profile(t.Context(), &oauth2.Token{AccessToken: "x"}); err == nil || !strings.Contains(err.Error(), "no user id") {
		t.Fatalf("err = %v", err)
	}
	// goth formats GitHub's numeric id with strconv: a reply without one is "0".
	gh := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, `{"login": "no-id", "email": "a@example.com"}`)
	})
	if _, err := buildWith(t, "github", gh).Profile(t.Context(), &oauth2.Token{AccessToken: "x"}); err == nil || !strings.Contains(err.Error(), "no user id") {
		t.Fatalf("err = %v", err)
	}
	if _, err := buildWith(t, "discord", hc).Profile(t.Context(), &oauth2.Token{}); err == nil {
		t.Fatal("Profile without an access token should fail")
	}
}

func TestProfileHonoursContext(t *testing.T) {
	hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	p := buildWith(t, "github", hc)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Profile(ctx, &oauth2.Token{AccessToken: "slow"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Profile took %v after its context ended", d)
	}
	done, cancel2 := context.WithCancel(t.Context())
	cancel2()
	if _, err := p.Profile(done, &oauth2.Token{AccessToken: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want canceled", err)
	}
}

// recorder is a RoundTripper that answers every request itself.
type recorder struct {
	mu   sync.Mutex
	reqs []string // method, URL, headers and body of each request
	fail bool     // return a transport error instead of a 401
}

func (rt *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	var b strings.Builder
	b.WriteString(r.Method + " " + r.URL.String() + "\n")
	_ = r.Header.Write(&b)
	if r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		b.Write(body)
	}
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, b.String())
	rt.mu.Unlock()
	if rt.fail {
		return nil, errors.New("connection refused")
	}
	return &http.Response{
		StatusCode: http.StatusUnauthorized, Status: "401 Unauthorized", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader("{}")), Request: r,
	}, nil
}

// Every provider's profile request goes through the configured client, carries
// the token, and a failure never echoes the token back.
func TestProfileEveryProviderUsesTheClient(t *testing.T) {
	const token = "tok-SECRET/123+=" // needs escaping in URLs
	tok := (&oauth2.Token{AccessToken: token, RefreshToken: "r", Expiry: time.Now().Add(time.Hour)}).WithExtra(map[string]any{
		"id": "https://login.salesforce.com/id/00D/005", "stripe_user_id": "acct_1", "user_id": "U1",
	})
	for _, id := range IDs() {
		for _, fail := range []bool{false, true} {
			name := id + "/401"
			if fail {
				name = id + "/transport-error"
			}
			t.Run(name, func(t *testing.T) {
				rt := &recorder{fail: fail}
				_, err := buildWith(t, id, &http.Client{Transport: rt}).Profile(t.Context(), tok)
				if err == nil {
					t.Fatal("Profile succeeded against a 401")
				}
				for _, form := range []string{token, "tok-SECRET%2F123%2B%3D", "tok-SECRET%2F123+="} {
					if strings.Contains(err.Error(), form) {
						t.Errorf("error leaks the token: %v", err)
					}
				}
				rt.mu.Lock()
				defer rt.mu.Unlock()
				if len(rt.reqs) == 0 {
					t.Fatalf("no request went through the configured client (err: %v)", err)
				}
				if first := rt.reqs[0]; !strings.Contains(first, "tok-SECRET") {
					t.Errorf("first request does not carry the token:\n%s", first)
				}
			})
		}
	}
}

func TestSessionKeysReachGoth(t *testing.T) {
	tok := &oauth2.Token{AccessToken: "access-XYZ", RefreshToken: "refresh-XYZ", Expiry: time.Now().Add(time.Hour)}
	for _, id := range IDs() {
		e, _ := find(id)
		cfg, err := check(e, fakeConfig(id))
		if err != nil {
			t.Fatal(err)
		}
		data, err := e.session.encode(tok)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := e.newGoth(cfg, nil).UnmarshalSession(data)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if !strings.Contains(sess.Marshal(), "access-XYZ") {
			t.Errorf("%s: goth session lost the access token: %s", id, sess.Marshal())
		}
	}
}

func TestConfigIsCopied(t *testing.T) {
	rt := &recorder{}
	cfg := fakeConfig("auth0")
	cfg.HTTPClient = &http.Client{Transport: rt}
	p, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Extra["domain"] = "evil.example.com"
	_, _ = p.Profile(t.Context(), &oauth2.Token{AccessToken: "x"})
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.reqs) == 0 || !strings.Contains(rt.reqs[0], "example.eu.auth0.com") {
		t.Fatalf("Profile used a changed config: %v", rt.reqs)
	}
}

func TestProfileConcurrent(t *testing.T) {
	hc := idpClient(t, func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Query().Get("access_token"), "tok-")
		writeJSON(w, `{"id": `+id+`, "username": "u`+id+`", "email": "u`+id+`@example.com"}`)
	})
	p := buildWith(t, "gitlab", hc)
	var wg sync.WaitGroup
	for i := 1; i <= 8; i++ {
		wg.Go(func() {
			got, err := p.Profile(t.Context(), &oauth2.Token{AccessToken: "tok-" + strconv.Itoa(i)})
			if err != nil || got.ID != strconv.Itoa(i) {
				t.Errorf("call %d: %+v, %v", i, got, err)
			}
		})
	}
	wg.Wait()
}
