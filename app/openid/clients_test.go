package openid

import "testing"

// TestRedirectRegistered: a redirect URI matches exactly; a native app's
// loopback one (an IP literal or localhost, as registered) on any port,
// nothing else about it changed.
func TestRedirectRegistered(t *testing.T) {
	native := &Client{Redirects: []string{"com.example.app:/cb", "http://127.0.0.1:9/native", "http://localhost/loop?x=1"}}
	web := &Client{Redirects: []string{"https://app.example.com/cb", "http://127.0.0.1:9/web"}}
	for _, tc := range []struct {
		c    *Client
		uri  string
		want bool
	}{
		{native, "com.example.app:/cb", true},
		{native, "http://127.0.0.1:9/native", true},
		{native, "http://127.0.0.1:5555/native", true},
		{native, "http://127.0.0.1/native", true},
		{native, "http://localhost:4000/loop?x=1", true},
		{native, "com.example.app:/other", false},
		{native, "http://localhost:5555/native", false},
		{native, "http://127.0.0.2:5555/native", false},
		{native, "http://[::1]:5555/native", false},
		{native, "https://127.0.0.1:5555/native", false},
		{native, "http://x@127.0.0.1:5555/native", false},
		{native, "http://127.0.0.1:5555/native#f", false},
		{native, "http://127.0.0.1:5555/native?y=2", false},
		{native, "http://127.0.0.1:4000/loop?x=1", false},
		{web, "https://app.example.com/cb", true},
		{web, "http://127.0.0.1:9/web", true},
		{web, "http://127.0.0.1:5555/web", false},
		{web, "https://app.example.com/cb/", false},
	} {
		if got := tc.c.redirectRegistered(tc.uri); got != tc.want {
			t.Errorf("redirectRegistered(%q) = %v, want %v", tc.uri, got, tc.want)
		}
		// The same rule for post-logout redirect URIs.
		c := &Client{Redirects: tc.c.Redirects, PostLogouts: tc.c.Redirects}
		if got := c.postLogoutRegistered(tc.uri); got != tc.want {
			t.Errorf("postLogoutRegistered(%q) = %v, want %v", tc.uri, got, tc.want)
		}
	}
}
